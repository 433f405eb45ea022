fstitch.graph 1
%0 = input "xÿ" : f32[2]
