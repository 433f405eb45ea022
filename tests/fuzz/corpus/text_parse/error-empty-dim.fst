fstitch.graph 1
%0 = input "x" : f32[2,0]
