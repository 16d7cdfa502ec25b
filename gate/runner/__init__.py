"""The benchmark runner's side of the gate: the use case that measures, judges and asks for rounds until decided
(``gating``, over the commits it measures, ``sides``, and ``judge``), driving asv with progress (``asvrun``),
where its time went (``timeprofile``), which benchmarks undecided cells need more rounds of (``rounds``), paired
ratios from the sidecar (``pairs``) and delivering results to the service (``upload``)."""
