fstitch.graph 1
# LayerNorm over the last axis, as a framework decomposes it:
#   y = (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) * gamma + beta
%0 = input "x" : f32[64,256]
%1 = input "gamma" : f32[256]
%2 = input "beta" : f32[256]
%3 = reduce_mean %0 axes=[1] keepdims=true : f32[64,1]
%4 = broadcast %3 : f32[64,256]
%5 = sub %0, %4 : f32[64,256]
%6 = mul %5, %5 : f32[64,256]
%7 = reduce_mean %6 axes=[1] keepdims=true : f32[64,1]
%8 = constant 9.9999997473787516e-06 : f32
%9 = broadcast %8 : f32[64,1]
%10 = add %7, %9 : f32[64,1]
%11 = rsqrt %10 : f32[64,1]
%12 = broadcast %11 : f32[64,256]
%13 = mul %5, %12 : f32[64,256]
%14 = broadcast %1 : f32[64,256]
%15 = mul %13, %14 : f32[64,256]
%16 = broadcast %2 : f32[64,256]
%17 = add %15, %16 : f32[64,256]
output "y" = %17
