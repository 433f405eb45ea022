fstitch.graph 2
