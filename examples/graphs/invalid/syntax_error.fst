fstitch.graph 1
# A missing comma between the operands of mul.
%0 = input "x" : f32[4,8]
%1 = mul %0 %0 : f32[4,8]
output "y" = %1
