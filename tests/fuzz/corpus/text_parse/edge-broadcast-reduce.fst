fstitch.graph 1
%0 = input "x" : f32[2,3]
%1 = input "b" : f32[3]
%2 = add %0, %1 : f32[2,3]
%3 = reduce_max %2 axes=[-1,0] keepdims=false : f32
output "y" = %3
output "x again" = %0
