"""Hand-written fused Numba kernels, one module per task: the baselines assembled kernels must match."""
