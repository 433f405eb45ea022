fstitch.graph 1
%0 = iota axis=1 : i32[4,5]
%1 = cast %0 : f16[4,5]
%2 = permute %1 perm=[1,0] : f16[5,4]
%3 = reshape %2 : f16[20]
%4 = broadcast %3 : f16[2,20]
%5 = broadcast %4 : f16[2,20]
%6 = gt %4, %5 : bool[2,20]
%7 = select %6, %4, %5 : f16[2,20]
%8 = logical_not %6 : bool[2,20]
%9 = reduce_prod %0 axes=[0] keepdims=true : i32[1,5]
output "s" = %7
output "n" = %8
output "p" = %9
