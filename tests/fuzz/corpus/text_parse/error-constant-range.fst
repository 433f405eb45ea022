fstitch.graph 1
%0 = constant 300 : i8
