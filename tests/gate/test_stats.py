"""gate.stats: estimates, intervals and decisions on simulated benchmark noise with a known truth."""

import math

import numpy as np
import pytest

from gate import stats
from gate.stats import Decision, Estimate


def _processes(rng, *, effect=1.0, processes=4, pairs=40, within=0.10, between=0.0):
    """Per-process pair ratios: lognormal noise within a process plus a per-process offset."""
    return [effect * np.exp(rng.normal(rng.normal(0, between), within, pairs)) for _ in range(processes)]


def test_paired_interval_covers_the_truth_with_process_drift():
    """With drift between processes the hierarchical interval still covers the true ratio ~95% of the time."""
    rng = np.random.default_rng(7)
    trials, covered = 200, 0
    for seed in range(trials):
        est = stats.paired(_processes(rng, effect=1.04, between=0.02), margin=0.03, seed=seed)
        covered += est.low <= 1.04 <= est.high
    assert covered / trials >= 0.88


def test_pooling_pairs_as_if_independent_would_undercover():
    """The reason for the hierarchy: one big group (pairs treated as independent) covers far less often."""
    rng = np.random.default_rng(8)
    flat = hier = 0
    for seed in range(100):
        groups = _processes(rng, effect=1.0, between=0.04)
        hier += stats.paired(groups, margin=0.03, seed=seed).low <= 1.0
        e = stats.paired([np.concatenate(groups)], margin=0.03, seed=seed)
        flat += e.low <= 1.0 <= e.high
    assert hier > flat


@pytest.mark.parametrize(("effect", "expected"), [(1.0, Decision.PASS), (1.15, Decision.FAIL)])
def test_paired_decisions_on_clear_cases(effect, expected):
    rng = np.random.default_rng(1)
    est = stats.paired(_processes(rng, effect=effect), margin=0.03)
    [(decision, _)] = stats.decide_all([est])
    assert decision is expected
    assert est.low <= effect <= est.high


def test_effect_near_the_margin_is_inconclusive():
    rng = np.random.default_rng(2)
    est = stats.paired(_processes(rng, effect=1.03, processes=2, pairs=20), margin=0.03)
    assert stats.decide(est, q_value=est.p_slower) is Decision.INCONCLUSIVE


def test_unpaired_is_antisymmetric_and_finds_a_shift():
    rng = np.random.default_rng(3)
    a = [rng.lognormal(0, 0.05, 20) for _ in range(3)]  # three processes a side
    b = [1.2 * rng.lognormal(0, 0.05, 20) for _ in range(3)]
    ab = stats.unpaired(a, b, margin=0.05)
    ba = stats.unpaired(b, a, margin=0.05)
    assert ab.ratio == pytest.approx(1 / ba.ratio)
    assert 1.15 < ab.ratio < 1.25
    assert stats.decide_all([ab])[0][0] is Decision.FAIL
    assert stats.decide_all([ba])[0][0] is Decision.PASS


def _estimate(low, high, p, margin=0.03, fail_margin=None, groups=2):
    return Estimate(
        ratio=math.sqrt(low * high),
        low=low,
        high=high,
        p_slower=p,
        margin=margin,
        fail_margin=margin if fail_margin is None else fail_margin,
        design="paired",
        samples=80,
        groups=groups,
    )


def test_one_process_a_side_cannot_decide_a_commit_comparison():
    """Process-to-process spread is unknown with one process each: Student's t with 1 df leaves it open."""
    rng = np.random.default_rng(6)
    est = stats.unpaired([rng.lognormal(0, 0.05, 60)], [1.2 * rng.lognormal(0, 0.05, 60)], margin=0.05)
    assert stats.decide_all([est])[0][0] is Decision.INCONCLUSIVE


def test_decision_boundaries():
    assert stats.decide(_estimate(0.95, 1.03, 0.9), q_value=0.9) is Decision.PASS
    assert stats.decide(_estimate(1.031, 1.2, 1e-4), q_value=1e-4) is Decision.FAIL
    assert stats.decide(_estimate(1.0, 1.05, 0.2), q_value=0.2) is Decision.INCONCLUSIVE
    # outside the margin but not a discovery after FDR control
    assert stats.decide(_estimate(1.031, 1.2, 0.01), q_value=0.04) is Decision.INCONCLUSIVE


def test_a_pass_needs_enough_processes():
    assert (
        stats.decide(_estimate(0.95, 1.01, 0.9, groups=1), q_value=0.9, min_groups=2) is Decision.INCONCLUSIVE
    )
    assert stats.decide(_estimate(0.95, 1.01, 0.9, groups=2), q_value=0.9, min_groups=2) is Decision.PASS


def test_the_noise_floor_makes_a_fail_harder_never_a_pass_easier():
    # 8% slower: beyond the 3% margin but inside a 10% noise floor -> neither pass nor fail
    est = _estimate(1.05, 1.11, 1e-6, fail_margin=0.10)
    assert stats.decide(est, q_value=1e-6) is Decision.INCONCLUSIVE
    assert stats.decide(_estimate(1.12, 1.2, 1e-6, fail_margin=0.10), q_value=1e-6) is Decision.FAIL
    assert stats.decide(_estimate(0.98, 1.05, 0.5, fail_margin=0.10), q_value=0.5) is Decision.INCONCLUSIVE


def test_fdr_control_demotes_a_lone_borderline_fail_among_many_cells():
    borderline = _estimate(1.031, 1.08, 0.02)
    quiet = [_estimate(0.97, 1.01, 0.99)] * 199
    alone = stats.decide_all([borderline])[0][0]
    among = stats.decide_all([borderline, *quiet])[0][0]
    assert alone is Decision.FAIL
    assert among is Decision.INCONCLUSIVE


def test_a_strong_regression_survives_fdr_over_200_cells():
    rng = np.random.default_rng(4)
    strong = stats.paired(_processes(rng, effect=1.3), margin=0.03)
    quiet = [stats.paired(_processes(rng), margin=0.03, seed=s) for s in range(199)]
    decisions = stats.decide_all([strong, *quiet])
    assert decisions[0][0] is Decision.FAIL
    assert not any(d is Decision.FAIL for d, _ in decisions[1:])


@pytest.mark.parametrize(
    "groups",
    [[], [[]], [[1.0, 2.0]], [[1.0, 0.0, 2.0]], [[1.0, float("nan"), 2.0, 3.0]], [[1.0, -1.0, 2.0]]],
)
def test_unusable_samples_raise_insufficient_data(groups):
    with pytest.raises(stats.InsufficientData):
        stats.paired(groups, margin=0.03)


def test_noise_floor_covers_every_aa_deviation():
    rng = np.random.default_rng(5)
    aa = [stats.paired(_processes(rng, between=0.03), margin=0.03, seed=s) for s in range(20)]
    floor = stats.noise_floor(aa)
    assert floor.cells == 20
    assert all(abs(math.log(e.ratio)) <= math.log1p(floor.noise_floor) + 1e-12 for e in aa)
    assert floor.mde > floor.noise_floor


def test_noise_floor_needs_enough_cells():
    with pytest.raises(ValueError, match="at least 3"):
        stats.noise_floor([_estimate(0.99, 1.01, 0.9)])


def test_a_scaled_summary_is_the_summary_of_the_scaled_samples():
    rng = np.random.default_rng(11)
    groups = [rng.lognormal(0, 0.05, 30) for _ in range(3)]
    direct = stats.summarize([1.2 * g for g in groups])
    scaled = stats.summarize(groups).scaled(1.2)
    for name in ("center", "se", "low", "high", "between_se"):
        assert getattr(scaled, name) == pytest.approx(getattr(direct, name), abs=1e-12)


@pytest.mark.parametrize(("effect", "expected"), [(0.7, True), (1.0, False), (0.97, False), (1.3, False)])
def test_faster_needs_the_interval_below_the_inverse_fail_margin(effect, expected):
    rng = np.random.default_rng(11)
    est = stats.paired(_processes(rng, effect=effect), margin=0.03)
    [(faster, q)] = stats.faster_all([est])
    assert faster is expected
    assert (q < 0.025) is expected


def test_faster_is_the_mirror_of_slower():
    rng = np.random.default_rng(12)
    a = [rng.lognormal(0, 0.05, 20) for _ in range(3)]
    b = [1.25 * rng.lognormal(0, 0.05, 20) for _ in range(3)]
    sa, sb = stats.summarize(a, seed=1), stats.summarize(b, seed=2)
    ab = stats.unpaired_estimate(sa, sb, margin=0.05)
    ba = stats.unpaired_estimate(sb, sa, margin=0.05)
    assert ab.p_slower == pytest.approx(ba.p_faster)
    assert stats.faster_all([ba])[0][0] and not stats.faster_all([ab])[0][0]


def test_faster_is_controlled_for_false_discoveries_over_the_family():
    """One cell just past the threshold on its own is not faster among many cells that are not."""
    edge = _estimate(0.90, 0.95, 1.0, fail_margin=0.05)
    edge = Estimate(**{**edge.to_dict(), "p_faster": 0.02})
    noise = [Estimate(**{**_estimate(0.97, 1.03, 0.5).to_dict(), "p_faster": 0.6}) for _ in range(20)]
    assert stats.faster(edge, q_faster=edge.p_faster)
    [(alone, _)] = stats.faster_all([edge])
    assert alone
    flags = stats.faster_all([edge, *noise])
    assert not flags[0][0]


def test_an_exact_estimate_is_faster_only_when_every_run_is():
    a, b = stats.exact([100.0, 100.0]), stats.exact([80.0, 81.0])
    assert stats.exact_estimate(a, b, margin=0.01).p_faster == 0.0
    assert stats.exact_estimate(a, stats.exact([99.5]), margin=0.01).p_faster == 1.0
