fstitch.graph 1
%0 = input "x" : f32[2]
%1 = reduce_sum %0 axes=[0] keepdims=maybe : f32
