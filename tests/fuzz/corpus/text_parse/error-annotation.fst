fstitch.graph 1
%0 = input "x" : f32[2]
%1 = exp %0 : f16[2]
