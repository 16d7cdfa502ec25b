import os

# Count Numba runtime allocations, so tests can check that warm kernels allocate nothing per env.
os.environ.setdefault("NUMBA_NRT_STATS", "1")
