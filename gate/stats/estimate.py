"""Slowdown estimates with a confidence interval, for the two designs the gate compares.

Everything works on log-times, so a ratio and its inverse are symmetric and a multiplicative drift is a shift.
Samples are first reduced to a ``Summary`` (median log value, its hierarchical-bootstrap standard error and
percentile interval), once, when results arrive; comparisons are then arithmetic on summaries, so an
evaluation of hundreds of cells never resamples anything.

- ``paired``: two implementations alternated in one process (A B B A ...). Each pair gives a log-ratio; the
  estimate is the median log-ratio with its percentile interval.
- ``unpaired``: two commits (or thread counts) measured in separate processes: the difference of the two median
  log-times, with Welch's interval on the two sides' standard errors.

Every standard error is at least the spread of the per-process medians over sqrt(processes), and intervals use
Student's t with processes - 1 degrees of freedom: with a handful of processes a bootstrap alone is too narrow
(measured: an A/A pair whose 1-thread processes were bimodal passed a cell with a 20% slowdown injected). The
one-sided p-values of "slower than 1 + the fail margin" and of "faster than its inverse" come from the same t,
so they are continuous and can survive false-discovery control over hundreds of cells, where a resampling
p-value could never go below 1/resamples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy.special import stdtr, stdtrit

from gate.stats.bootstrap import RESAMPLES, median_distribution, pooled_median

CONFIDENCE = 0.95


class InsufficientData(ValueError):
    """Too few or unusable samples; the caller turns it into an error decision, never a pass."""


@dataclass(frozen=True, kw_only=True)
class Summary:
    """The median of log samples with its hierarchical-bootstrap spread (all in log units)."""

    center: float
    se: float  # hierarchical-bootstrap standard error
    low: float  # percentile interval at CONFIDENCE
    high: float
    samples: int
    groups: int
    between_se: float = 0.0  # standard error of the mean of the per-process medians (0 with one process)

    def to_dict(self) -> dict:
        return asdict(self)

    def scaled(self, factor: float) -> Summary:
        """The summary of every sample multiplied by ``factor``: a shift in log units, the spread unchanged."""
        shift = math.log(factor)
        return replace(self, center=self.center + shift, low=self.low + shift, high=self.high + shift)


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """B/A time ratio (above 1: B is slower) with its confidence interval and the evidence behind it."""

    ratio: float
    low: float
    high: float
    p_slower: float  # one-sided p of "ratio <= 1 + fail_margin"; small means B is slower than that
    margin: float  # a pass needs the whole interval below 1 + margin
    fail_margin: float  # a fail needs the whole interval above 1 + fail_margin (>= margin: the noise floor)
    design: str  # "paired", "unpaired" or "exact"
    samples: int
    groups: int
    # one-sided p of "ratio >= 1 / (1 + fail_margin)"; small means B is faster than that (1: no evidence)
    p_faster: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)


def _clean(groups: Sequence[Sequence[float]], *, what: str) -> list[np.ndarray]:
    arrays = [np.asarray(g, dtype=float) for g in groups]
    arrays = [a for a in arrays if a.size]
    if not arrays:
        raise InsufficientData(f"no samples for {what}")
    for a in arrays:
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise InsufficientData(f"{what} holds a non-positive or non-finite sample")
    total = sum(a.size for a in arrays)
    if total < 3:
        raise InsufficientData(f"{what} has {total} samples; at least 3 are needed")
    return arrays


def summarize(
    groups: Sequence[Sequence[float]],
    *,
    what: str = "the samples",
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Summary:
    """Summary of positive samples (times or time ratios), one array per benchmark process."""
    logs = [np.log(g) for g in _clean(groups, what=what)]
    replicates = median_distribution(logs, resamples=resamples, rng=np.random.default_rng(seed))
    center = pooled_median(logs)
    alpha = 1 - CONFIDENCE
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    medians = [float(np.median(g)) for g in logs]
    return Summary(
        center=center,
        se=float(np.std(replicates, ddof=1)),
        low=float(min(low, center)),
        high=float(max(high, center)),
        samples=sum(g.size for g in logs),
        groups=len(logs),
        between_se=float(np.std(medians, ddof=1) / np.sqrt(len(medians))) if len(medians) > 1 else 0.0,
    )


def exact(values: Sequence[float], *, what: str = "the cost") -> Summary:
    """Summary of a deterministic count (the cost signal, one value per run): the median, and the range of the
    runs as its interval (a point when one run measured it). No bootstrap: there is no noise to model. Counts
    are summarised as log(1 + count), so a kernel with no cache misses is a valid cell (ratios of counts in the
    millions are unchanged)."""
    array = np.asarray(values, dtype=float)
    if not array.size or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InsufficientData(f"{what} needs finite counts >= 0, got {list(values)!r:.80}")
    logs = np.log1p(array)
    center = float(np.median(logs))
    return Summary(
        center=center,
        se=0.0,
        low=float(logs.min()),
        high=float(logs.max()),
        samples=logs.size,
        groups=logs.size,
    )


def exact_estimate(a: Summary, b: Summary, *, margin: float, fail_margin: float | None = None) -> Estimate:
    """B/A of two exact summaries; the interval spans the runs' ranges (a point for one run each). A fail must
    clear ``fail_margin`` (the machine's A/A cost floor when larger than ``margin``)."""
    fail_margin = max(margin, fail_margin or 0.0)
    center = b.center - a.center
    return Estimate(
        ratio=math.exp(center),
        low=math.exp(b.low - a.high),
        high=math.exp(b.high - a.low),
        p_slower=0.0 if b.low - a.high > math.log1p(fail_margin) else 1.0,
        p_faster=0.0 if b.high - a.low < -math.log1p(fail_margin) else 1.0,
        margin=margin,
        fail_margin=fail_margin,
        design="exact",
        samples=a.samples + b.samples,
        groups=min(a.groups, b.groups),
    )


def _cluster_se(s: Summary) -> float:
    """A bootstrap over a handful of processes underestimates their spread (it cannot resample what it did not
    see); the spread of the per-process medians is the floor of the standard error."""
    return max(s.se, s.between_se)


def _p_slower(center: float, se: float, margin: float, df: float) -> float:
    threshold = math.log1p(margin)
    if se > 0:
        return float(stdtr(df, -(center - threshold) / se))  # Student's t survival function (scipy.special)
    return 0.0 if center > threshold else 1.0


def _p_faster(center: float, se: float, margin: float, df: float) -> float:
    """One-sided p of "the ratio is at least 1 / (1 + margin)": the mirror of ``_p_slower`` in log units."""
    return _p_slower(-center, se, margin, df)


def _quantile(df: float) -> float:
    """Two-sided CONFIDENCE quantile of Student's t with ``df`` degrees of freedom (processes - 1)."""
    return float(stdtrit(df, 0.5 + CONFIDENCE / 2))


def paired_estimate(ratios: Summary, *, margin: float, fail_margin: float | None = None) -> Estimate:
    """B/A from the summary of per-pair B/A time ratios.

    The interval is the bootstrap's percentile interval, widened where Student's t on the per-process spread
    (processes - 1 degrees of freedom) is wider: with three processes the bootstrap alone is too narrow.
    """
    fail_margin = max(margin, fail_margin or 0.0)
    df = max(ratios.groups - 1, 1)
    half = _quantile(df) * ratios.between_se
    return Estimate(
        ratio=math.exp(ratios.center),
        low=math.exp(min(ratios.low, ratios.center - half)),
        high=math.exp(max(ratios.high, ratios.center + half)),
        p_slower=_p_slower(ratios.center, _cluster_se(ratios), fail_margin, df),
        p_faster=_p_faster(ratios.center, _cluster_se(ratios), fail_margin, df),
        margin=margin,
        fail_margin=fail_margin,
        design="paired",
        samples=ratios.samples,
        groups=ratios.groups,
    )


def unpaired_estimate(a: Summary, b: Summary, *, margin: float, fail_margin: float | None = None) -> Estimate:
    """B/A from the summaries of A's and B's times: Welch's interval on the two cluster standard errors."""
    fail_margin = max(margin, fail_margin or 0.0)
    center = b.center - a.center
    se_a, se_b = _cluster_se(a), _cluster_se(b)
    se = math.hypot(se_a, se_b)
    if a.groups > 1 and b.groups > 1 and se > 0:  # Welch-Satterthwaite degrees of freedom
        df = se**4 / (se_a**4 / (a.groups - 1) + se_b**4 / (b.groups - 1))
    else:
        df = 1.0
    half = _quantile(df) * se
    return Estimate(
        ratio=math.exp(center),
        low=math.exp(center - half),
        high=math.exp(center + half),
        p_slower=_p_slower(center, se, fail_margin, df),
        p_faster=_p_faster(center, se, fail_margin, df),
        margin=margin,
        fail_margin=fail_margin,
        design="unpaired",
        samples=a.samples + b.samples,
        groups=min(a.groups, b.groups),
    )


def paired(ratios: Sequence[Sequence[float]], *, margin: float, seed: int = 0) -> Estimate:
    """B/A from per-process arrays of pair ratios (B time / A time of one pair)."""
    return paired_estimate(summarize(ratios, what="paired ratios", seed=seed), margin=margin)


def unpaired(
    a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], *, margin: float, seed: int = 0
) -> Estimate:
    """B/A from per-process arrays of each side's times."""
    return unpaired_estimate(
        summarize(a, what="the baseline's times", seed=seed),
        summarize(b, what="the candidate's times", seed=seed + 1),
        margin=margin,
    )
