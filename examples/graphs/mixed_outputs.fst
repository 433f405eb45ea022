fstitch.graph 1
# Several outputs of mixed dtypes from a bf16 activation, an f32 bias and an i32 tensor:
#   y          bf16  silu(x + bias), rounded to bf16
#   row_max    f32   the largest silu(x + bias) of each row
#   above      bool  x > bias
#   above_sum  i32   the sum of k where x > bias, per row
#   x_again    bf16  the input x itself
#   shifted    f16   x + bias, rounded to f16
%0 = input "x" : bf16[24,96]
%1 = input "bias" : f32[96]
%2 = input "k" : i32[24,96]
%3 = cast %0 : f32[24,96]
%4 = broadcast %1 : f32[24,96]
%5 = add %3, %4 : f32[24,96]
%6 = silu %5 : f32[24,96]
%7 = cast %6 : bf16[24,96]
%8 = reduce_max %6 axes=[1] keepdims=false : f32[24]
%9 = gt %3, %4 : bool[24,96]
%10 = cast %9 : i32[24,96]
%11 = mul %10, %2 : i32[24,96]
%12 = reduce_sum %11 axes=[1] keepdims=false : i32[24]
%13 = cast %5 : f16[24,96]
output "y" = %7
output "row_max" = %8
output "above" = %9
output "above_sum" = %12
output "x_again" = %0
output "shifted" = %13
