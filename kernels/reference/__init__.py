"""NumPy references: the semantics every fast path is checked against. They own the parity tolerances
(``kernels.reference.tolerance``)."""
