"""The meter: everything that runs, times, counts, checks or records the kernels (the subject, ``kernels/``).

- ``bench``: interleaved in-process timing of implementations, with a parallel-copy roofline;
- ``parity``: an implementation against the NumPy reference on fresh snapshots with poisoned outputs (spec E5,
  with the tolerances the reference owns, ``kernels.reference.tolerance``);
- ``synthetic``: the deterministic snapshots (spec E4) the hot slice is measured on;
- ``trajectory``: the end-to-end collector checked against the reference, open and closed loop;
- ``collect``, ``calls``, ``physics``: a collector run timed from outside, per call, and physics alone;
- ``cost``: per-call instructions and simulated cache misses under callgrind;
- ``placement``, ``fingerprint``: where a benchmark process runs, and what it ran on.

The gate measures a pull request's subject with its base commit's meter (docs/gate.md). This package imports
the subject (through ``kernels.registry``); the subject never imports it.
"""
