fstitch.graph 1
%0 = input "x" : f32[1,1,1,1,1,1,1,1]
%1 = reduce_sum %0 axes=[0,1,2,3,4,5,6,7] keepdims=true : f32[1,1,1,1,1,1,1,1]
%2 = input "big" : bf16[4611686018427387904]
%3 = input "wide" : i8[1099511627776,2]
%4 = sigmoid %2 : bf16[4611686018427387904]
output "y" = %1
output "b" = %4
