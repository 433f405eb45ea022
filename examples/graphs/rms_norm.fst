fstitch.graph 1
# RMSNorm over the last axis with a bf16 result: y = bf16(x * rsqrt(mean(x^2) + eps) * w).
%0 = input "x" : f32[48,512]
%1 = input "w" : f32[512]
%2 = constant 9.9999999747524271e-07 : f32
%3 = mul %0, %0 : f32[48,512]
%4 = reduce_mean %3 axes=[1] keepdims=true : f32[48,1]
%5 = broadcast %2 : f32[48,1]
%6 = add %4, %5 : f32[48,1]
%7 = rsqrt %6 : f32[48,1]
%8 = broadcast %7 : f32[48,512]
%9 = mul %0, %8 : f32[48,512]
%10 = broadcast %1 : f32[48,512]
%11 = mul %9, %10 : f32[48,512]
%12 = cast %11 : bf16[48,512]
output "y" = %12
