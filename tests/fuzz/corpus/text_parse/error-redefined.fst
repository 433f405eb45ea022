fstitch.graph 1
%0 = input "x" : f32[2]
%0 = neg %0 : f32[2]
