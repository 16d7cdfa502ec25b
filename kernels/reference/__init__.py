"""NumPy references: the semantics every fast path is checked against. They own the parity tolerances."""

# Spec E5: floats within atol + rtol * |reference|; uint8 outputs and state exactly equal.
ATOL = 1e-5
RTOL = 1e-4
