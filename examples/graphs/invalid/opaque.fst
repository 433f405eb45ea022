fstitch.graph 1
# A bias and GELU around a matmul that fstitch does not fuse: the caller runs the opaque
# operation between the fused kernels.
%0 = input "x" : f32[16,32]
%1 = input "w" : f32[32,8]
%2 = input "b" : f32[8]
%3 = opaque "matmul" (%0, %1) : f32[16,8]
%4 = broadcast %2 : f32[16,8]
%5 = add %3, %4 : f32[16,8]
%6 = gelu %5 : f32[16,8]
output "y" = %6
