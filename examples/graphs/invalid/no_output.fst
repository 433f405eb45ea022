fstitch.graph 1
# Parses, but a graph needs at least one output.
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
