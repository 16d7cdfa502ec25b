"""The gate's vocabulary, shared by every layer, one module per job: the words of a verdict (``vocabulary``),
the asv benchmarks it reads (``benchmarks``), which suites an asv run measures (``selection``) and how long they
take (``timings``), what names and identifies a machine (``machines``), the records a validated upload becomes
(``uploads``) and the records of a verdict (``evaluations``).

Pure data and functions: no I/O, no store, no web framework, nothing from ``kernels`` (the gate never imports
the code it judges).
"""
