fstitch.graph 1
%0 = input "x" : f64[3]
%1 = gelu_tanh %0 : f64[3]
%2 = gelu %1 : f64[3]
%3 = silu %2 : f64[3]
%4 = erf %3 : f64[3]
%5 = rsqrt %4 : f64[3]
%6 = pow %5, %0 : f64[3]
%7 = sign %6 : f64[3]
%8 = round %7 : f64[3]
%9 = floor %8 : f64[3]
%10 = ceil %9 : f64[3]
%11 = reduce_mean %10 axes=[0] keepdims=false : f64
output "m" = %11
