fstitch.graph 1
%0 = input "x" : i8[9223372036854775807]
%1 = reduce_max %0 axes=[0] keepdims=false : i8
output "y" = %1
