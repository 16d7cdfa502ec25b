"""What must hold for a merge, read from the **base** commit's ``fusegate-policy.toml`` (never the PR head's).

A pull request that edits the policy is judged by the base branch's version: it cannot relax the gate that judges
it. The command line may add comparisons (``--impl``), which can only make the gate stricter.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from gate import git, subject
from gate.domain.benchmarks import COST_METRICS

POLICY_FILE = "fusegate-policy.toml"
# The cost metrics benchmarks/cost.py tracks per cell (gate.ingest.domain.COST names their benchmarks).
POLICY_VERSION = 1
TRADEOFFS = ("approve", "reject")  # what a trade-off row does (gate.evaluate.tradeoff)


class PolicyError(ValueError):
    pass


@dataclass(frozen=True, kw_only=True)
class MarginRule:
    margin: float
    task: str | None = None
    num_envs: int | None = None


STORED = "a stored evaluation's policy"  # what ``from_dict`` reads unless told


@dataclass(frozen=True, kw_only=True)
class Policy:
    version: int = POLICY_VERSION
    required_machines: tuple[str, ...] = ()  # empty: every machine that reported for the head commit
    baseline: str = ""  # empty: the declared subject's ([tool.fusegate] baseline, read from the base too)
    # implementations judged against the baseline; None: those the base's declared grid pairs with it (quick)
    compare: tuple[str, ...] | None = None
    threads: tuple[int, ...] = ()  # thread counts that count; empty: every one measured
    best_threads: bool = True  # also compare each implementation at its own best thread count
    head_vs_base: tuple[str, ...] = ()  # implementations judged head vs base; empty: every one measured
    margin: float = 0.03  # implementation vs baseline, as a fraction
    head_vs_base_margin: float = 0.05
    margins: tuple[MarginRule, ...] = ()  # per task / num_envs overrides of ``margin``
    collector_margin: float = 0.03  # a compared implementation's collector step vs the baseline's
    min_rounds: int = 2  # a pass needs at least this many benchmark processes behind its interval
    max_rounds: int = 8  # budget: benchmark processes per cell before inconclusive is final
    # The cost signal (benchmarks/cost.py; docs/gate.md): exact per-call cost under callgrind at 1 thread.
    cost_metric: str = "instructions"  # one of COST_METRICS, or "none" for wall time alone
    cost_margin: float = 0.01  # head vs base: a cost more than this fraction above base fails
    cost_for_parallel: bool = (
        True  # the 1-thread cost of a kernel and scale also backs its multi-thread cells
    )
    # A cost ratio below this (B/A) while time does not fall with it is implausible: an error, never a pass
    cost_plausible: float = 0.5
    # A headline row (implementation vs baseline) the base already failed or left undecided, and the head does not
    # make worse, passes: the pull request is judged on its change (gate.evaluate.inherited)
    inherited_pass: bool = True
    # A head-vs-base row of a kernel whose sources are the base's (the same kernel id in both runs) passes without
    # timing it again: the same code cannot be the change (gate.evaluate.head_vs_base)
    same_sources_pass: bool = True
    # A row whose cost fails while its own time is not slower, beside the same kernel and scale faster beyond doubt
    # at another thread count, is a trade-off (gate.evaluate.tradeoff): "approve" passes it, "reject" fails it
    tradeoffs: str = "approve"

    def judges_head_vs_base(self, impl: str) -> bool:
        """Whether the head-vs-base rows judge ``impl`` (``head_vs_base`` empty: every implementation measured)."""
        return not self.head_vs_base or impl in self.head_vs_base

    def margin_for(self, task: str, num_envs: int | None) -> float:
        best = self.margin
        for rule in self.margins:  # the last matching rule wins, most specific written last
            if rule.task in (None, task) and rule.num_envs in (None, num_envs):
                best = rule.margin
        return best

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_toml(cls, text: str, *, source: str) -> Policy:
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PolicyError(f"{source}: not valid TOML: {exc}") from None
        return cls.from_dict(raw, source=source)

    @classmethod
    def from_dict(cls, raw: Mapping, *, source: str = STORED) -> Policy:
        """The policy of a parsed file, or of ``to_dict``'s record (as stored with an evaluation and sent on the
        wire): unknown keys, wrong types and values out of range are refused, saying ``source``."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise PolicyError(
                f"{source}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        if raw.get("version", POLICY_VERSION) != POLICY_VERSION:
            raise PolicyError(
                f"{source}: version {raw['version']!r} is not supported (expected {POLICY_VERSION})"
            )
        values = {}
        for key, value in raw.items():
            if key == "margins":
                value = list(value) if isinstance(value, tuple) else value  # to_dict's tuples, in memory
                if not isinstance(value, list) or not all(isinstance(rule, dict) for rule in value):
                    raise PolicyError(f"{source}: margins must be a list of tables, got {value!r}")
                rules = []
                for i, rule in enumerate(value):
                    extra = set(rule) - {"margin", "task", "num_envs"}
                    if extra or "margin" not in rule:
                        raise PolicyError(
                            f"{source}: margins[{i}] needs margin and may have task, num_envs; got {rule}"
                        )
                    _check(source, f"margins[{i}].task", rule.get("task"), (str, type(None)))
                    _check(source, f"margins[{i}].num_envs", rule.get("num_envs"), (int, type(None)))
                    _check(source, f"margins[{i}].margin", rule["margin"], (int, float))
                    rules.append(MarginRule(**rule))
                values[key] = tuple(rules)
            elif key == "compare" and value is None and source == STORED:
                values[key] = None  # a policy not yet read from a base (its grid fills it)
            else:
                kind = _TYPES[key]
                if isinstance(kind, tuple) and kind[0] is list:
                    value = list(value) if isinstance(value, tuple) else value  # to_dict's, in memory
                    _check(source, key, value, list)
                    for item in value:
                        _check(source, f"{key} item", item, kind[1])
                    values[key] = tuple(value)
                else:
                    _check(source, key, value, kind)
                    values[key] = value
        policy = cls(**values)
        policy.validate(source)
        return policy

    def validate(self, source: str) -> None:
        margins = (f"margins[{i}]" for i in range(len(self.margins)))
        for name in ("margin", "head_vs_base_margin", "collector_margin", *margins):
            value = (
                self.margins[int(name[8:-1])].margin if name.startswith("margins[") else getattr(self, name)
            )
            if not 0 <= value < 1:
                raise PolicyError(f"{source}: {name} must be a fraction in [0, 1), got {value!r}")
        if self.cost_metric not in (*COST_METRICS, "none"):
            raise PolicyError(
                f"{source}: cost_metric must be one of {', '.join(COST_METRICS)} or none, got {self.cost_metric!r}"
            )
        if not 0 < self.cost_plausible < 1:
            raise PolicyError(
                f"{source}: cost_plausible must be a fraction in (0, 1), got {self.cost_plausible!r}"
            )
        if not 0 <= self.cost_margin < 1:
            raise PolicyError(f"{source}: cost_margin must be a fraction in [0, 1), got {self.cost_margin!r}")
        if self.tradeoffs not in TRADEOFFS:
            raise PolicyError(
                f"{source}: tradeoffs must be one of {', '.join(TRADEOFFS)}, got {self.tradeoffs!r}"
            )
        if not 1 <= self.min_rounds <= self.max_rounds:
            raise PolicyError(
                f"{source}: need 1 <= min_rounds <= max_rounds, got min_rounds={self.min_rounds}, max_rounds={self.max_rounds}"
            )


_TYPES = {
    "version": int,
    "required_machines": (list, str),
    "baseline": str,
    "compare": (list, str),
    "threads": (list, int),
    "best_threads": bool,
    "head_vs_base": (list, str),
    "margin": (int, float),
    "head_vs_base_margin": (int, float),
    "collector_margin": (int, float),
    "min_rounds": int,
    "max_rounds": int,
    "cost_metric": str,
    "cost_margin": (int, float),
    "cost_for_parallel": bool,
    "cost_plausible": (int, float),
    "inherited_pass": bool,
    "same_sources_pass": bool,
    "tradeoffs": str,
}


def _check(source: str, name: str, value, kind) -> None:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        kinds = ()  # TOML true is not a number here
    if not isinstance(value, kinds):
        expected = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise PolicyError(f"{source}: {name} must be {expected}, got {value!r}")


def judged_by(evaluation) -> Policy | None:
    """The policy an evaluation (``gate.evaluate.Outcome``, a stored ``EvaluationRecord`` or its wire form) was
    judged by, typed from the record it carries; None for one that could not read its policy (an error)."""
    record = evaluation.policy
    if isinstance(record, Policy) or not record:
        return record or None
    return Policy.from_dict(record)


def read_from_base(repo: Path, base_sha: str) -> tuple[Policy, str]:
    """(policy, where it came from) as of the base commit."""
    text = git.show(repo, base_sha, POLICY_FILE)
    if text is not None:
        source = f"{POLICY_FILE} at base {base_sha[:12]}"
        return _with_baseline(Policy.from_toml(text, source=source), repo, base_sha), source
    if git.missing(repo, [base_sha]):
        raise PolicyError(
            f"base commit {base_sha[:12]} is not in the repository at {repo}, so its policy cannot be read; "
            "fetch it (git fetch origin) or point FUSEGATE_REPO at a clone that has it"
        )
    default = _with_baseline(Policy(), repo, base_sha)
    return default, f"built-in default policy ({POLICY_FILE} absent at base {base_sha[:12]})"


# The baseline and compared implementations of a base that declares no subject (a commit from before the
# declaration): the ones it was judged with.
UNDECLARED_BASELINE, UNDECLARED_COMPARE = "handwritten", ("assembled",)


def _with_baseline(policy: Policy, repo: Path, base_sha: str) -> Policy:
    """``policy`` with the base's declared baseline and paired implementations (``gate.subject``) where it names
    none itself."""
    if policy.baseline and policy.compare is not None:
        return policy
    pyproject, table = git.show(repo, base_sha, subject.PYPROJECT), git.show(repo, base_sha, subject.FILE)
    if table is None and "[tool.fusegate" not in (pyproject or ""):
        baseline, compare = UNDECLARED_BASELINE, UNDECLARED_COMPARE
    else:
        try:
            declared = subject.from_texts(pyproject, table)
        except subject.SubjectError as exc:
            raise PolicyError(f"the policy at base {base_sha[:12]} names no baseline, and {exc}") from None
        baseline, compare = declared.baseline, declared.profile("quick").paired
    return replace(
        policy,
        baseline=policy.baseline or baseline,
        compare=tuple(compare) if policy.compare is None else policy.compare,
    )


def edits_policy(repo: Path, base_sha: str, head_sha: str) -> bool:
    """True when head's policy file differs from base's (the PR edits the rules that judge it)."""
    return git.differs(repo, base_sha, head_sha, POLICY_FILE)
