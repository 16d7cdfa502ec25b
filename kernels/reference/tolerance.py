"""The parity tolerances the reference owns (spec E5): floats within ATOL + RTOL * |reference|; uint8 outputs
and state exactly equal.

The gate reads this file from a pull request's base commit, never from its head: a change cannot loosen the
tolerance its kernels are checked with (docs/gate.md).
"""

ATOL = 1e-5
RTOL = 1e-4
