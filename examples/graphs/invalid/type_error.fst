fstitch.graph 1
# exp of an integer: the operation does not type-check.
%0 = input "x" : i32[4,8]
%1 = exp %0 : i32[4,8]
output "y" = %1
