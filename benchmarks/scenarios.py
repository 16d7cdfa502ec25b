"""The gate tested like a product: real code changes on a throwaway branch, judged by ``fusegate gate --measure``.

    python -m benchmarks.scenarios [--scenarios docs,comment,extra_work,...] [--runs 1] [--every MINUTES]
                                   [--head-every MINUTES] [--max-minutes 10] [--keep DIR] [--asv] [--json]
                                   [--out FILE | --resume FILE]

A run checks out the current HEAD in a temporary git worktree (the base) with a scratch SQLite store, then for
each scenario commits a real change on top of the base and runs ``fusegate gate --base BASE --head HEAD
--measure`` on it, exactly as a user would: the first call measures the base (its own tree), every call measures
the head's subject with the base's meter and times it against the base in lockstep, then adds rounds to the
undecided rows within ``--max-minutes``. The base is measured once per run and reused by every head after it
(as the bot reuses a stored base). It prints expected against actual verdict per scenario with the rows that
decided, how long each took, and the confusion table over all runs. ``--every`` starts each run that many minutes
after the previous one; ``--head-every`` starts each head of a run that many minutes after the previous one, so
the heads meet one base as it ages, as the bot's stored base does (an A/A spread over an hour). Each head's result
is appended to ``results.jsonl`` in the run's work directory as it ends (``--keep`` keeps it), and ``--out FILE``
rewrites the whole ``--json`` document (its plan, the heads so far, their confusion table) as each head ends, so a
run stopped part-way keeps what it measured; ``--resume FILE`` runs the rest of that plan, on its base, writing
the same file. The profile is the
environment's (``FUSEGATE_BENCH_*``). ``--asv`` asks asv instead: each scenario in a fresh clone of the base,
judged by ``asv continuous --interleave-rounds HEAD~1 HEAD`` (reject: a benchmark reported slower; changed: only
faster; approve: none; error: asv did not finish its comparison).
Slow: kept out of the test run.

Scenarios (each a change a pull request could make; ``SCENARIOS`` has the exact edits):

- ``docs``: a README line: the subject is the base's, judged on the base's results -> approve, nothing measured;
- ``comment``: a comment at the end of both hand-written kernels (an A/A: the kernels are compiled and measured
  again, their code is the same) -> approve;
- ``extra_work``: the assembled g1_walk kernel computes ``cmd_norm`` as a chain of 36 dependent square roots (same
  values, ~3.5% more instructions) -> reject by cost;
- ``sqrt_chain``: the same with a chain of 12 (~1.5% more instructions) -> reject by cost;
- ``parity``: the assembled g1_walk kernel's projected gravity z uses 2.1 where the spec has 2.0 -> reject by a
  correctness row;
- ``collector_breaks``: the assembled g1_walk kernel refuses any N not a multiple of 128: the collector's 64
  envs cannot be built -> reject by the collector's correctness row;
- ``relaxed_policy``: the head loosens every margin in fusegate-policy.toml and adds the extra work -> reject (the
  policy is the base's);
- ``serial_loop``: the generated kernels loop over envs with ``range`` where they had ``prange`` (1-thread
  instructions unchanged) -> reject by a 2-thread row of the assembled implementation;
- ``serial_sums``: the generated kernels loop over envs with ``range`` and add every env's term sums to one row,
  with no thread ids -> reject by the 2-thread rows of the assembled implementation; its revert is a parallel
  reduction (per-thread rows, a thread id per env): faster at 2 threads, more instructions at 1, a trade-off;
- ``motion_fastmath``: the g1_motion generator compiles with the fast-math flags the g1_walk one uses
  (reassociation, contraction; NaN and infinity checks stay exact), an optimization -> approve;
- ``serial_baseline``: the hand-written g1_walk kernel loops over envs with ``range`` -> reject by its own
  ``head_vs_base`` rows; the assembled rows that divide by it pass, saying the baseline changed;
- ``false_sharing``: the generated kernels' per-thread term sums laid out term-major, so the threads' sums share
  cache lines -> its measured effect decides (reject where it is above the margin);
- ``oversubscribe``: the collector stops capping BLAS's threads, so the policy's BLAS pool runs beside Numba's and
  MuJoCo's -> its measured effect decides;
- meter edits that would hide a regression, each beside a real one (the base's meter measures it, so each is
  rejected, with a row naming the meter files): ``hide_cost`` (the cost worker runs the assembled kernel
  uninstrumented, with the extra work), ``hide_pairing`` (the pairing loop times the hand-written kernel where the
  assembled one should be, with the serial loop), ``hide_tolerance`` (the parity tolerance loosened 10^8 times,
  with the parity break), ``hide_snapshot`` (the paired snapshot of g1_motion's compared kernel made easier: every
  env on motion frame 0, with extra work in the assembled g1_motion kernel).
- ``revert_NAME``, for every scored regression NAME: its base is NAME's head, and it undoes NAME's edits
  (an optimization that gives back what NAME took) -> approve; but ``revert_hide_cost`` -> error: its base's
  cost worker counts nothing for the assembled kernels and the head is measured with the base's meter, so its
  costs are implausible, and the gate says so rather than approve on a broken meter.

Each scenario names the implementations it changes (``changed``); a fail row on any other is blame on unchanged
code, listed with the head and counted as wrong even when the verdict is right. The confusion table groups the
scenarios as A/A (nothing measured changes), improvements (must approve) and regressions (must reject).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WALK = "kernels/tasks/g1_walk/assembled.py"
MOTION = "kernels/tasks/g1_motion/assembled.py"
CODEGEN = "kernels/assembled/codegen.py"
HANDWRITTEN_WALK = "kernels/tasks/g1_walk/handwritten.py"
WALK_ASSEMBLED = ("g1_walk/assembled",)
ASSEMBLED = ("*/assembled",)


@dataclass(frozen=True)
class Edit:
    path: str
    old: str  # text replaced in ``path``; empty: ``new`` is appended
    new: str


@dataclass(frozen=True)
class Scenario:
    name: str
    expected: str  # approve | reject (| error: a revert the base's meter cannot judge, REVERT_EXPECTED)
    edits: tuple[Edit, ...]
    expect_rows: str  # what the deciding rows should show, for the reader
    effect: bool = False  # the verdict follows the measured effect (reported, not scored as right or wrong)
    # the implementations the change touches, as ``task/impl`` patterns (fnmatch): a fail row on any other is
    # counted as blame on unchanged code
    changed: tuple[str, ...] = ()
    on: str = ""  # the scenario whose head is this one's base (its edits committed on the run's base first)

    @property
    def group(self) -> str:
        """How the confusion table groups it: an A/A (nothing changed in what is measured), an improvement
        (a change that must approve) or a regression (one that must reject)."""
        if not self.changed:
            return "A/A"
        return "improvement" if self.expected == "approve" or self.on else "regression"


# A revert that cannot be approved: its base's cost worker counts nothing for the assembled kernels, and every
# head is measured with its base's meter, so the head's costs are implausible (an error that says so). A meter
# that a pull request repairs is judged once the repair is on the base, never by the pull request's own meter.
REVERT_EXPECTED = {"hide_cost": "error"}


def revert(s: Scenario) -> Scenario:
    """The head that undoes ``s`` on top of it: its base is ``s``'s head, its edits ``s``'s inverted, last first
    (an improvement: it must approve, unless REVERT_EXPECTED says otherwise)."""
    assert all(e.old for e in s.edits), f"{s.name}: an appended text has no inverse edit"
    expected = REVERT_EXPECTED.get(s.name, "approve")
    return Scenario(
        f"revert_{s.name}",
        expected,
        tuple(Edit(e.path, e.new, e.old) for e in reversed(s.edits)),
        f"every row pass: the head undoes {s.name}"
        if expected == "approve"
        else "error: the base's meter cannot measure the head",
        effect=s.effect,
        changed=s.changed,
        on=s.name,
    )


def _chain(n: int) -> Edit:
    return Edit(
        WALK,
        '"cmd_norm": (("cmd",), ("cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)",)),',
        f'"cmd_norm": (("cmd",), ("cmd_norm = 0.0", "for _r in range({n}):", '
        '"    cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz + 1e-300 * cmd_norm)")),',
    )


EXTRA_WORK = _chain(36)
PARITY = Edit(
    WALK, '"grav_z = -(1.0 - 2.0 * (qx * qx + qy * qy))",', '"grav_z = -(1.0 - 2.1 * (qx * qx + qy * qy))",'
)
SERIAL = Edit(
    CODEGEN, '"scratch[:, :] = 0.0", "for i in prange(n):"', '"scratch[:, :] = 0.0", "for i in range(n):"'
)
COMMENT = tuple(
    Edit(f"kernels/tasks/{task}/handwritten.py", "", "\n# The same kernel: a comment to measure it again.\n")
    for task in ("g1_walk", "g1_motion")
)
# The generated kernels as a serial loop would write them: no thread ids, every env's term sums added to one row.
SERIAL_SUMS = (
    Edit(
        CODEGEN,
        '"scratch[:, :] = 0.0", "for i in prange(n):").indent()\n    src("tid = numba.get_thread_id()")',
        '"scratch[:, :] = 0.0", "acc = scratch[0]", "for i in range(n):").indent()\n    src("tid = 0")',
    ),
    Edit(CODEGEN, 'src("acc = scratch[tid]", *(f"acc[{k}] += f{k}"', 'src(*(f"acc[{k}] += f{k}"'),
)
SERIAL_BASELINE = Edit(HANDWRITTEN_WALK, "    for i in prange(n):\n", "    for i in range(n):\n")
MOTION_EXTRA = Edit(  # the assembled g1_motion kernel: a chain of 36 dependent square roots per env
    MOTION,
    '"anchor_angle": (("frame_t",), ("anchor_angle = quat_diff_angle(qm, qa)",)),',
    '"anchor_angle": (("frame_t",), ("anchor_angle = quat_diff_angle(qm, qa)", "_w = 0.0", '
    '"for _r in range(36):", "    _w = math.sqrt(_w + anchor_angle * anchor_angle + 1e-300)", '
    '"anchor_angle = anchor_angle + 0.0 * _w")),',
)

SCENARIOS = {
    s.name: s
    for s in (
        Scenario(
            "docs", "approve", (Edit("README.md", "", "\nA line of documentation.\n"),), "nothing measured"
        ),
        Scenario("comment", "approve", COMMENT, "every row pass; no row failed by time"),
        Scenario(
            "extra_work", "reject", (EXTRA_WORK,), "fail by cost: assembled g1_walk", changed=WALK_ASSEMBLED
        ),
        Scenario(
            "sqrt_chain",
            "reject",
            (_chain(12),),
            "fail by cost: assembled g1_walk (~1.5%)",
            changed=WALK_ASSEMBLED,
        ),
        Scenario(
            "parity", "reject", (PARITY,), "fail: correctness of assembled g1_walk", changed=WALK_ASSEMBLED
        ),
        Scenario(
            "collector_breaks",
            "reject",
            (
                Edit(
                    WALK,
                    "    generate = staticmethod(generate)\n",
                    "    generate = staticmethod(generate)\n\n"
                    "    def __init__(self, **kwargs):\n"
                    "        if kwargs['num_envs'] % 128:\n"
                    "            raise ValueError(f\"the assembled g1_walk kernel tiles envs by 128, not {kwargs['num_envs']}\")\n"
                    "        super().__init__(**kwargs)\n",
                ),
            ),
            "fail: correctness of the g1_walk assembled collector",
            changed=WALK_ASSEMBLED,
        ),
        Scenario(
            "relaxed_policy",
            "reject",
            (
                EXTRA_WORK,
                Edit("fusegate-policy.toml", "\nmargin = 0.03\n", "\nmargin = 0.9\n"),
                Edit("fusegate-policy.toml", "cost_margin = 0.01", "cost_margin = 0.9"),
                Edit("fusegate-policy.toml", "head_vs_base_margin = 0.05", "head_vs_base_margin = 0.9"),
            ),
            "fail by cost under the base's policy",
            changed=WALK_ASSEMBLED,
        ),
        Scenario(
            "serial_loop", "reject", (SERIAL,), "fail by time: assembled at 2 threads", changed=ASSEMBLED
        ),
        Scenario(
            "serial_sums",
            "reject",
            SERIAL_SUMS,
            "fail by time: assembled at 2 threads (its revert, a parallel reduction, runs more instructions)",
            changed=ASSEMBLED,
        ),
        Scenario(
            "motion_fastmath",
            "approve",
            (Edit(MOTION, "        fastmath=False,\n", "        fastmath=True,\n"),),
            "every row pass: assembled g1_motion faster at 1 and 2 threads",
            changed=("g1_motion/assembled",),
        ),
        Scenario(
            "serial_baseline",
            "reject",
            (SERIAL_BASELINE,),
            "fail by time: hand-written g1_walk at 2 threads; no row on assembled",
            changed=("g1_walk/handwritten",),
        ),
        Scenario(
            "false_sharing",
            "reject",
            (
                Edit(
                    CODEGEN,
                    "padded_scratch(max_threads(), max(1, len(self.plan.rewards)))",
                    "np.zeros((max(1, len(self.plan.rewards)), max_threads())).T",
                ),
            ),
            "the measured effect at 2 threads decides",
            effect=True,
            changed=ASSEMBLED,
        ),
        Scenario(
            "oversubscribe",
            "reject",
            (
                Edit(
                    "kernels/sim/collector.py",
                    'threadpool_limits(limits=self.policy_threads, user_api="blas")',
                    'threadpool_limits(limits=None, user_api="blas")',
                ),
            ),
            "the measured effect on the collector step decides",
            effect=True,
            changed=("*",),
        ),
        Scenario(
            "hide_cost",
            "reject",
            (
                EXTRA_WORK,
                Edit(
                    "gate/meter/cost/worker.py",
                    "    kernel.update_state(snap)\n    return lambda: kernel.update_state(snap)",
                    "    kernel.update_state(snap)\n    if cell.impl == 'assembled':\n"
                    "        return _uninstrumented(lambda: kernel.update_state(snap))\n"
                    "    return lambda: kernel.update_state(snap)",
                ),
            ),
            "fail by cost (the base's cost worker); a meter row names the worker",
            changed=ASSEMBLED,  # the worker edit reaches every assembled kernel
        ),
        Scenario(
            "hide_pairing",
            "reject",
            (
                SERIAL,
                Edit(
                    "benchmarks/hot_slice.py",
                    "        kernel, snap = self.kernels[name], self.snaps[name]",
                    "        kernel, snap = self.kernels[common.BASELINE], self.snaps[common.BASELINE]",
                ),
            ),
            "fail by time at 2 threads (the base's pairing loop); a meter row names hot_slice.py",
            changed=ASSEMBLED,
        ),
        Scenario(
            "hide_tolerance",
            "reject",
            (PARITY, Edit("kernels/tasks/g1_walk/meter.py", "ATOL = 1e-5", "ATOL = 1e3")),
            "fail: correctness (the base's tolerance); a meter row names meter.py",
            changed=WALK_ASSEMBLED,
        ),
        Scenario(
            "hide_snapshot",
            "reject",
            (
                MOTION_EXTRA,
                Edit(
                    "benchmarks/hot_slice.py",
                    "            self.snaps = {name: common.snapshot(task, num_envs, threads) for name in (common.BASELINE, impl)}",
                    "            self.snaps = {name: common.snapshot(task, num_envs, threads) for name in (common.BASELINE, impl)}\n"
                    "            if 'time_steps' in self.snaps[impl]:\n"
                    "                self.snaps[impl]['time_steps'][:] = 0",
                ),
            ),
            "fail by cost: assembled g1_motion (the base's snapshot); a meter row names hot_slice.py",
            changed=("g1_motion/assembled",),
        ),
    )
}
# every scored regression undone on top of it: an improvement, which must approve
SCENARIOS |= {
    r.name: r
    for r in (revert(s) for s in list(SCENARIOS.values()) if s.group == "regression" and not s.effect)
}


def _run(
    args: list[str], *, cwd: Path, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} exited with {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


def _git(tree: Path, *args: str, env: dict | None = None) -> str:
    return _run(["git", "-C", str(tree), *args], cwd=tree, env=env).stdout.strip()


def apply(tree: Path, scenario: Scenario, tag: str) -> None:
    """Write ``scenario``'s edits into ``tree`` (``tag`` makes an appended text unique: a fresh head each time)."""
    for e in scenario.edits:
        path = tree / e.path
        text = path.read_text()
        if e.old and e.old not in text:
            raise SystemExit(
                f"scenario {scenario.name}: the text to change is no longer in {e.path}; update it"
            )
        path.write_text(
            text.replace(e.old, e.new, 1) if e.old else text + e.new.replace("again.", f"again ({tag}).")
        )


def _gate(tree: Path, base: str, head: str, db: str, env: dict, max_minutes: float) -> tuple[dict, str]:
    done = _run(
        [
            sys.executable,
            "-m",
            "gate.cli",
            "gate",
            "--base",
            base,
            "--head",
            head,
            "--measure",
            "--db",
            db,
            "--json",
            "--max-minutes",
            f"{max_minutes:g}",
        ],
        cwd=tree,
        env={**env, "FUSEGATE_REPO": str(tree)},
        check=False,
    )
    try:
        return json.loads(done.stdout), done.stderr
    except json.JSONDecodeError:
        return {"verdict": "error", "reasons": [done.stderr[-2000:]], "comparisons": []}, done.stderr


def by_role(text: str, commits: dict[str, str]) -> str:
    """``text`` with each commit (its full sha or the 12-character prefix outputs quote) named by its role
    (``{sha: "BASE"}``): a kept record reads the same whichever commits the run made."""
    for sha, role in commits.items():
        text = text.replace(sha, role).replace(sha[:12], role)
    return text


def _blamed(evaluation: dict, changed: tuple[str, ...]) -> list[str]:
    """The fail and error rows on an implementation the change does not touch (``changed``: ``task/impl``
    patterns): a reviewer sent to the wrong code. Rows about the meter or the machine name no implementation."""
    return [
        f"{c['kind']} {c['task']} {c['impl']} N={c['num_envs']} thr={c['threads']}"
        for c in evaluation.get("comparisons", [])
        if c["decision"] in ("fail", "error")
        and c["kind"] not in ("meter", "machine")
        and not any(fnmatch(f"{c['task']}/{c['impl']}", p) for p in changed)
    ]


def _deciding(evaluation: dict) -> list[str]:
    rows = [c for c in evaluation.get("comparisons", []) if c["decision"] in ("fail", "error")]
    rows += [c for c in evaluation.get("comparisons", []) if c["kind"] == "meter" and c["decision"] == "pass"]
    return [
        f"{c['decision']} by {c.get('signal', '?')}: {c['kind']} {c['task']} {c['impl']} N={c['num_envs']} "
        f"thr={c['threads']} time={c.get('ratio') or 0:.3f} cost={c.get('cost_ratio') or 0:.4f} {c['reason'][:160]}"
        for c in rows
    ]


@dataclass
class Result:
    run: int
    scenario: str
    expected: str
    actual: str
    seconds: float
    effect: bool
    deciding: list[str] = field(default_factory=list)
    headline: str = ""  # the verdict's first line
    group: str = ""  # A/A, improvement or regression (Scenario.group)
    base: str = ""  # the scenario the head was measured against ("" the run's base)
    blamed: list[str] = field(default_factory=list)  # fail rows on implementations the change does not touch
    time_fails: int = 0  # rows failed by time
    largest: str = ""  # the largest head/base time and cost ratios among the rows
    reasons: list[str] = field(default_factory=list)
    step: int = 0  # the head's place in its run (``--scenarios`` order): with ``run``, what --resume skips


def run_once(
    number: int,
    names: list[str],
    *,
    keep: Path | None,
    max_minutes: float,
    base: str,
    head_every: float = 0.0,
    skip: frozenset[tuple[int, int]] = frozenset(),
    on_result=lambda result: None,
) -> list[Result]:
    """One run of ``names`` on ``base``: each head's result as it ends to ``on_result``; the heads whose
    (run, step) is in ``skip`` are not run (an earlier, interrupted run of the same plan holds them)."""
    work = Path(keep or tempfile.mkdtemp(prefix="fusegate-scenarios-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "tree"
    _run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(tree), base], cwd=ROOT)
    who = {
        "GIT_AUTHOR_NAME": "scenario",
        "GIT_AUTHOR_EMAIL": "s@x",
        "GIT_COMMITTER_NAME": "scenario",
        "GIT_COMMITTER_EMAIL": "s@x",
    }
    # the gate's own code from the tree (its meter measures); asv drops PYTHONPATH and passes ASV_PYTHONPATH on
    env = {**os.environ, **who, "PYTHONPATH": str(tree)}
    db = f"sqlite:///{work / 'gate.db'}"
    out = []
    # a scenario's name -> the commit its revert starts from: its first head of the run, or one made for the revert
    bases = {"": base}
    started = time.monotonic()
    try:
        for k, name in enumerate(names):
            if k and head_every:  # from the run's start (the first head's call measures the base too)
                wait = started + k * head_every * 60 - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            s = SCENARIOS[name]
            if (number, k) in skip:
                continue
            if s.on not in bases:
                _git(tree, "checkout", "--quiet", "--detach", "--force", base)
                apply(tree, SCENARIOS[s.on], f"run {number} base {s.on}")
                _git(tree, "commit", "--quiet", "-am", f"scenario: {s.on}", env=env)
                bases[s.on] = _git(tree, "rev-parse", "HEAD")
            _git(tree, "checkout", "--quiet", "--detach", "--force", bases[s.on])
            apply(tree, s, f"run {number} step {k}")
            _git(tree, "commit", "--quiet", "-am", f"scenario: {name}", env=env)
            head = _git(tree, "rev-parse", "HEAD")
            # a revert later in the run starts from this head, already measured (as a stored base is reused)
            bases.setdefault(name, head)
            t0 = time.monotonic()
            evaluation, log = _gate(tree, bases[s.on], head, db, env, max_minutes)
            seconds = time.monotonic() - t0
            rows = evaluation.get("comparisons", [])
            timed = [
                c for c in rows if c.get("ratio") and c["kind"] in ("head_vs_base", "collector_head_vs_base")
            ]
            top = max(timed, key=lambda c: c["ratio"], default=None)
            costs = [c for c in rows if c.get("cost_ratio") and c["kind"] == "head_vs_base"]
            top_cost = max(costs, key=lambda c: c["cost_ratio"], default=None)
            largest = ", ".join(
                f"{what} {c[key]:.4f} ({c['task']} {c['impl']} N={c['num_envs']} thr={c['threads']})"
                for what, key, c in (("time", "ratio", top), ("cost", "cost_ratio", top_cost))
                if c
            )
            roles = {bases[s.on]: "BASE", head: "HEAD"}
            evaluation = json.loads(by_role(json.dumps(evaluation), roles))
            result = Result(
                run=number,
                scenario=name,
                expected=s.expected,
                actual=evaluation.get("verdict", "error"),
                seconds=seconds,
                effect=s.effect,
                deciding=_deciding(evaluation),
                headline=evaluation.get("headline", ""),
                group=s.group,
                base=s.on,
                blamed=_blamed(evaluation, s.changed),
                time_fails=sum(c["decision"] == "fail" and c.get("signal") == "time" for c in rows),
                largest=largest,
                reasons=evaluation.get("reasons", []),
                step=k,
            )
            print(
                f"run {number} {name}: expected {s.expected}, got {result.actual} ({seconds:.0f} s)"
                + (f"; {len(result.blamed)} fail rows on unchanged code" if result.blamed else ""),
                file=sys.stderr,
            )
            (work / f"{number}-{k}-{name}.log").write_text(log)
            # each head as it ends: a long campaign cut short keeps them
            with open(work / "results.jsonl", "a") as f:
                f.write(json.dumps(result.__dict__) + "\n")
            out.append(result)
            on_result(result)
    finally:
        _run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    return out


def _asv_changes(output: str) -> list[str]:
    """The rows of asv's comparison table that it marks as changed (``+`` slower, ``-`` faster, ``x`` failed,
    ``!`` newly failing): ``| + | before | after | ratio | benchmark |``."""
    rows = []
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in ("+", "-", "x", "!"):
            rows.append(f"{cells[0]} {cells[4]}: {cells[1]} -> {cells[2]} ({cells[3]})")
    return rows


def asv_once(
    number: int,
    names: list[str],
    *,
    keep: Path | None,
    base: str,
    skip: frozenset[tuple[int, int]] = frozenset(),
    on_result=lambda result: None,
) -> list[Result]:
    """Each scenario as asv judges it: a fresh clone of ``base`` (no asv environment, no results), the change
    committed on top, ``asv continuous --interleave-rounds HEAD~1 HEAD``. Its answer: reject when it reports a
    benchmark slower (or failing), changed when only faster, approve when none; error when it did not finish
    its comparison or its exit code disagrees with its table."""
    work = Path(keep or tempfile.mkdtemp(prefix="fusegate-asv-scenarios-"))
    work.mkdir(parents=True, exist_ok=True)
    who = {
        "GIT_AUTHOR_NAME": "scenario",
        "GIT_AUTHOR_EMAIL": "s@x",
        "GIT_COMMITTER_NAME": "scenario",
        "GIT_COMMITTER_EMAIL": "s@x",
    }
    # asv's own run: nothing of fusegate's (FUSEGATE_BENCH_*) in its environment
    from gate.meter.profile import PREFIX

    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)} | who
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if not (Path.home() / ".asv-machine.json").exists():
        _run([sys.executable, "-m", "asv", "machine", "--yes"], cwd=work, env=env)
    out = []
    for k, name in enumerate(names):
        s = SCENARIOS[name]
        if (number, k) in skip:
            continue
        clone = work / f"{number}-{k}-{name}"
        _run(["git", "clone", "--quiet", str(ROOT), str(clone)], cwd=work)
        _git(clone, "checkout", "--quiet", "--detach", base)
        apply(clone, s, f"run {number} step {k}")
        _git(clone, "commit", "--quiet", "-am", f"scenario: {name}", env=env)
        t0 = time.monotonic()
        done = _run(
            [sys.executable, "-m", "asv", "continuous", "--interleave-rounds", "HEAD~1", "HEAD"],
            cwd=clone,
            env=env,
            check=False,
        )
        seconds = time.monotonic() - t0
        changes = _asv_changes(done.stdout)
        slower = [c for c in changes if c[0] in "+x!"]
        if done.returncode not in (0, 1) or bool(slower) != (done.returncode == 1):
            actual = "error"  # asv did not finish its comparison, or its exit code and its table disagree
        else:
            actual = "reject" if slower else ("changed" if changes else "approve")
        result = Result(
            run=number,
            scenario=name,
            expected=s.expected,
            actual=actual,
            seconds=seconds,
            effect=s.effect,
            deciding=[f"asv continuous exited {done.returncode}", *changes],
            step=k,
        )
        print(f"run {number} {name}: expected {s.expected}, asv: {actual} ({seconds:.0f} s)", file=sys.stderr)
        (work / f"{number}-{k}-{name}.log").write_text(done.stdout + done.stderr)
        with open(work / "results.jsonl", "a") as f:
            f.write(json.dumps(result.__dict__) + "\n")
        out.append(result)
        on_result(result)
        if not keep:
            _run(["rm", "-rf", str(clone)], cwd=work)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scenarios", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"default: {','.join(SCENARIOS)}")
    p.add_argument("--runs", type=int, default=1, help="independent runs (a fresh base measurement each)")
    p.add_argument("--every", type=float, default=0.0, help="minutes from one run's start to the next's")
    p.add_argument(
        "--head-every",
        type=float,
        default=0.0,
        help="minutes from one head's start to the next's within a run (heads spread over the base's age)",
    )
    p.add_argument("--max-minutes", type=float, default=10.0, help="fusegate gate --max-minutes per head")
    p.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    p.add_argument("--base", default="HEAD", help="the commit every scenario changes (default HEAD)")
    p.add_argument(
        "--asv", action="store_true", help="judge each scenario by asv continuous from a fresh clone instead"
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write the --json document to FILE after every head, as it ends",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="go on with the plan of FILE (an --out of a run that stopped): its heads are kept, not run again, "
        "and FILE is written as each further head ends",
    )
    args = p.parse_args(argv)
    names = args.scenarios.split(",")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        p.error(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    judge = "asv continuous" if args.asv else "fusegate gate --measure"
    base = _git(ROOT, "rev-parse", args.base)
    plan = [[k + 1, step, name] for k in range(args.runs) for step, name in enumerate(names)]
    rows: list[Result] = []
    out = args.out
    if args.resume is not None:
        try:
            earlier = json.loads(args.resume.read_text())
        except (OSError, ValueError) as exc:
            p.error(f"--resume {args.resume}: {exc}")
        if earlier.get("plan") != plan or earlier.get("judge") != judge:
            p.error(
                f"--resume {args.resume}: its plan is {earlier.get('plan')} judged by {earlier.get('judge')}, "
                "not this command's; give the same --scenarios, --runs and --asv"
            )
        if args.base == "HEAD" and earlier.get("commit"):
            base = earlier["commit"]  # the plan's base, whatever is checked out now
        elif earlier.get("commit") not in (None, base):
            p.error(f"--resume {args.resume}: its base is {earlier['commit'][:12]}, not {base[:12]}")
        rows = [Result(**r) for r in earlier["rows"]]
        out = out or args.resume
    skip = frozenset((r.run, r.step) for r in rows)

    def confusion() -> Counter:
        return Counter((r.group, r.expected, r.actual) for r in rows if not r.effect)

    def document() -> dict:
        return {
            "judge": judge,
            "commit": base,
            "plan": plan,
            "rows": [r.__dict__ for r in rows],
            "confusion": [[*k, v] for k, v in confusion().items()],
        }

    def done(result: Result) -> None:
        rows.append(result)
        if out is not None:  # atomically: a run stopped while writing keeps the previous heads
            tmp = out.with_suffix(out.suffix + ".tmp")
            tmp.write_text(json.dumps(document(), indent=2) + "\n")
            tmp.replace(out)

    started = time.monotonic()
    for k in range(args.runs):
        if all((k + 1, step) in skip for step in range(len(names))):
            continue
        wait = started + k * args.every * 60 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        keep = args.keep / f"run{k + 1}" if args.keep else None
        if args.asv:
            asv_once(k + 1, names, keep=keep, base=base, skip=skip, on_result=done)
        else:
            run_once(
                k + 1,
                names,
                keep=keep,
                max_minutes=args.max_minutes,
                base=base,
                head_every=args.head_every,
                skip=skip,
                on_result=done,
            )
    rows.sort(key=lambda r: (r.run, r.step))
    if args.json:
        print(json.dumps(document(), indent=2))
    else:
        for r in rows:
            mark = "effect" if r.effect else ("ok" if r.expected == r.actual and not r.blamed else "WRONG")
            print(
                f"run {r.run} {r.scenario:<16} expected {r.expected:<8} got {r.actual:<12} {mark:<6} "
                f"{r.seconds:4.0f} s  largest head/base: {r.largest}"
            )
            if r.headline:
                print(f"    {r.headline}")
            for line in r.deciding[:6]:
                print(f"    {line}")
            if r.blamed:
                print(f"    fail rows on unchanged code: {'; '.join(r.blamed)}")
        print("\nconfusion over the scored scenarios (group: expected -> actual: count)")
        for (group, expected, actual), n in sorted(confusion().items()):
            print(f"  {group:<12} {expected:<8} -> {actual:<12} {n}")
        blamed = [r for r in rows if r.blamed]
        print(f"heads with a fail row on unchanged code: {len(blamed)} of {len(rows)}")
    return 0 if all(r.effect or (r.expected == r.actual and not r.blamed) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
