fstitch.graph 1
# Row softmax, as a framework decomposes it: y = exp(x - max(x)) / sum(exp(x - max(x))).
# 1000 columns: not a multiple of the block size.
%0 = input "x" : f32[32,1000]
%1 = reduce_max %0 axes=[1] keepdims=true : f32[32,1]
%2 = broadcast %1 : f32[32,1000]
%3 = sub %0, %2 : f32[32,1000]
%4 = exp %3 : f32[32,1000]
%5 = reduce_sum %4 axes=[1] keepdims=true : f32[32,1]
%6 = broadcast %5 : f32[32,1000]
%7 = div %4, %6 : f32[32,1000]
output "y" = %7
