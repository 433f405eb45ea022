fstitch.graph 1
# comment only
	%x = input "x" : u8[]
%y = neg %x : u8   # trailing
%z = div %y, %x : u8[]
output "z" = %z
