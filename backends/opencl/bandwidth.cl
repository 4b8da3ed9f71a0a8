// Kernels of the bandwidth probe. (Scaffold.)
