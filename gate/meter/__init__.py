"""The meter: everything that runs, times, counts, checks or records the kernels (the declared subject).

- ``bench``: interleaved in-process timing of implementations, with a parallel-copy roofline;
- ``subject``: the registry of the tasks the measured tree declares, and each task's meter parts (its
  ``meter.py``: the synthetic snapshots of spec E4, the parity tolerances, the cost weights);
- ``parity``: an implementation against its task's reference on fresh snapshots with poisoned outputs (spec E5);
- ``trajectory``: the end-to-end collector checked against the reference, open and closed loop;
- ``collect``, ``calls``, ``physics``: a collector run timed from outside, per call, and physics alone;
- ``cost``: per-call instructions and simulated cache misses under callgrind;
- ``placement``, ``fingerprint``: where a benchmark process runs, and what it ran on.

The gate measures a pull request's subject with its base commit's meter (docs/gate.md). This package imports
the subject (through the registry, ``gate.meter.subject``) and names none of its tasks; the subject never
imports it.
"""
