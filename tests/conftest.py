"""Test lanes. ``pytest`` runs the quick lane (the edit-test loop, under 3 minutes here); ``pytest --full`` runs
every test, as CI does. A test leaves the quick lane by a marker that says why (pyproject.toml): ``compile``
(Numba compiles in fresh processes), ``slow`` (seconds each: callgrind, asv, stores at scale, concurrency),
``browser`` (Chromium), ``postgres`` (a PostgreSQL server), ``container`` (the image and the compose stack
under podman). Naming tests (``file::test``) or ``-m`` picks them whatever their lane."""

import os

# Count Numba runtime allocations, so tests can check that warm kernels allocate nothing per env.
os.environ.setdefault("NUMBA_NRT_STATS", "1")

LANE_MARKERS = ("compile", "slow", "browser", "postgres", "container")
_FULL = False


def examples(full: int, quick: int = 3) -> int:
    """Hypothesis examples per property test: ``full`` in the full lane, at most ``quick`` in the quick one."""
    return full if _FULL else min(full, quick)


def pytest_configure(config):
    global _FULL
    _FULL = bool(config.getoption("--full"))


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        help="the full lane (CI): compile, slow, browser and postgres tests too",
    )


def _chosen(config) -> bool:
    """True when the command line chose tests itself: --full, -m, -k or a test's node id."""
    return (
        config.getoption("--full")
        or bool(config.getoption("-m"))
        or bool(config.getoption("-k"))
        or any("::" in arg for arg in config.args)
    )


def pytest_collection_modifyitems(config, items):
    if _chosen(config):
        return
    keep, left = [], []
    for item in items:
        (left if any(item.get_closest_marker(m) for m in LANE_MARKERS) else keep).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = keep


def pytest_report_header(config):
    if _chosen(config):
        return "lane: as chosen on the command line"
    return f"lane: quick (not {', '.join(LANE_MARKERS)}); pytest --full runs every test"


_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Seconds of every test (setup, call, teardown) by the lane marker that put it in the full lane."""
    item_lane = next((m for m in LANE_MARKERS if m in report.keywords), "quick")
    _SECONDS[item_lane] = _SECONDS.get(item_lane, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if _SECONDS:
        parts = ", ".join(f"{lane} {s:.0f} s" for lane, s in sorted(_SECONDS.items(), key=lambda kv: -kv[1]))
        terminalreporter.write_line(f"test time by lane: {parts}")
