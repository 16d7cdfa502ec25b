"""Term plans: which reward, termination and observation terms a task's update_state computes, as data.

A plan is built from frozen, keyword-only dataclasses and validated against the task's term library when it is
built (``TaskPlan.build``): an unknown term, an unknown or missing parameter, a parameter of the wrong type, a
non-finite weight, a duplicate name, or a term that reads an array the task's snapshot does not have is refused
with an error naming the term. A plan has a stable content hash (``plan.hash``), which keys generated kernels.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

PLAN_FORMAT = 1
POSITIVE = {"min": 0.0, "strict": True}  # field metadata: a parameter that must be > 0 (a width, a scale)
RESERVED_OUTPUTS = frozenset({"reward", "done", "term_means"})
TermKind = Literal["reward", "termination", "observation"]


class PlanError(ValueError):
    """A plan that does not fit its task's term library."""


@dataclass(frozen=True, kw_only=True)
class NoParams:
    """Parameters of a term that takes none."""


@dataclass(frozen=True, kw_only=True)
class TermDef:
    """One function of a task's term library: what kind it is, its typed parameters and what it reads.

    ``reads`` names snapshot arrays (spec E); ``dim`` is the width of an observation term; ``noise_column`` is
    where an observation term's pre-drawn noise starts in ``noise_u`` (None: the term takes no noise).
    """

    name: str
    kind: TermKind
    params: type = NoParams
    reads: tuple[str, ...] = ()
    dim: int = 1
    noise_column: int | None = None


@dataclass(frozen=True, kw_only=True)
class RewardTerm:
    """f_k scaled by ``weight`` in r = dt * sum(w_k f_k); ``name`` is the log key, ``fn`` the library term."""

    name: str
    weight: float
    params: Any = None  # a mapping or the term's params dataclass; build() turns it into the dataclass
    fn: str = ""  # library term; defaults to name


@dataclass(frozen=True, kw_only=True)
class TerminationTerm:
    name: str
    params: Any = None
    fn: str = ""


@dataclass(frozen=True, kw_only=True)
class ObservationTerm:
    """One block of an observation; ``noise`` is the uniform noise scale (0: noise-free)."""

    name: str
    noise: float = 0.0
    fn: str = ""


@dataclass(frozen=True, kw_only=True)
class ObservationGroup:
    """An output observation array: optionally another group's columns first (``include``), then ``terms``."""

    name: str
    terms: tuple[ObservationTerm, ...]
    include: str | None = None


@dataclass(frozen=True, kw_only=True)
class TaskPlan:
    task: str
    rewards: tuple[RewardTerm, ...]
    terminations: tuple[TerminationTerm, ...]
    observations: tuple[ObservationGroup, ...]
    noise_level: float = 1.0
    dt: float = 0.02
    library: Mapping[str, Mapping[str, TermDef]] = field(default_factory=dict, repr=False, compare=False)
    snapshot_names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    # --- building and validation ---------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        *,
        task: str,
        rewards: tuple[RewardTerm, ...] | list[RewardTerm],
        terminations: tuple[TerminationTerm, ...] | list[TerminationTerm],
        observations: tuple[ObservationGroup, ...] | list[ObservationGroup],
        library: Mapping[str, Mapping[str, TermDef]],
        snapshot_names: frozenset[str] | set[str],
        noise_level: float = 1.0,
        dt: float = 0.02,
    ) -> TaskPlan:
        where = f"{task} plan"
        _check_number(f"{where}: noise_level", noise_level, minimum=0.0)
        _check_number(f"{where}: dt", dt, minimum=0.0, strict=True)
        snapshot_names = frozenset(snapshot_names)
        rewards = tuple(
            dataclasses.replace(
                r,
                fn=r.fn or r.name,
                weight=_check_number(f"{where}: reward term {r.name!r}: weight", r.weight),
                params=_typed_params(where, "reward", r, library, snapshot_names),
            )
            for r in _unique(where, "reward", rewards, RewardTerm)
        )
        terminations = tuple(
            dataclasses.replace(
                t, fn=t.fn or t.name, params=_typed_params(where, "termination", t, library, snapshot_names)
            )
            for t in _unique(where, "termination", terminations, TerminationTerm)
        )
        groups = []
        for group in _unique(where, "observation group", observations, ObservationGroup):
            if not group.name.isidentifier() or group.name in RESERVED_OUTPUTS:
                raise PlanError(
                    f"{where}: observation group name {group.name!r} must be a Python identifier other than "
                    f"{', '.join(sorted(RESERVED_OUTPUTS))} (it names an output array)"
                )
            if group.include is not None and group.include not in {g.name for g in groups}:
                raise PlanError(
                    f"{where}: observation group {group.name!r} includes {group.include!r}, "
                    "which must be a group listed before it"
                )
            terms = []
            for o in _unique(f"{where}: group {group.name!r}", "observation", group.terms, ObservationTerm):
                definition = _definition(where, "observation", o, library, snapshot_names)
                noise = _check_number(f"{where}: observation {o.name!r}: noise", o.noise, minimum=0.0)
                if noise and definition.noise_column is None:
                    raise PlanError(
                        f"{where}: observation {o.name!r} ({definition.name}) has no noise column in noise_u; "
                        "set its noise to 0"
                    )
                terms.append(dataclasses.replace(o, fn=o.fn or o.name, noise=noise))
            groups.append(dataclasses.replace(group, terms=tuple(terms)))
        return cls(
            task=task,
            rewards=rewards,
            terminations=terminations,
            observations=tuple(groups),
            noise_level=float(noise_level),
            dt=float(dt),
            library={kind: dict(terms) for kind, terms in library.items()},
            snapshot_names=snapshot_names,
        )

    def replace(self, **changes: Any) -> TaskPlan:
        """A new plan with ``changes``, validated again."""
        fields = {
            "task": self.task,
            "rewards": self.rewards,
            "terminations": self.terminations,
            "observations": self.observations,
            "noise_level": self.noise_level,
            "dt": self.dt,
            **changes,
        }
        return TaskPlan.build(library=self.library, snapshot_names=self.snapshot_names, **fields)

    # --- derived --------------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """The plan as plain data (the hashed form)."""

        def params(p: Any) -> dict:
            return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}

        return {
            "format": PLAN_FORMAT,
            "task": self.task,
            "dt": self.dt,
            "noise_level": self.noise_level,
            "rewards": [
                {"name": r.name, "fn": r.fn, "weight": r.weight, "params": params(r.params)}
                for r in self.rewards
            ],
            "terminations": [
                {"name": t.name, "fn": t.fn, "params": params(t.params)} for t in self.terminations
            ],
            "observations": [
                {
                    "name": g.name,
                    "include": g.include,
                    "terms": [{"name": o.name, "fn": o.fn, "noise": o.noise} for o in g.terms],
                }
                for g in self.observations
            ],
        }

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of ``to_dict()`` (floats by repr, keys sorted): stable across runs."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def group(self, name: str) -> ObservationGroup:
        for g in self.observations:
            if g.name == name:
                return g
        raise KeyError(name)

    def layout(self, name: str) -> list[tuple[ObservationTerm, int]]:
        """(term, first column) of every block of group ``name``, included groups first."""
        group = self.group(name)
        blocks = self.layout(group.include) if group.include else []
        column = sum(self.definition(o).dim for o, _ in blocks)
        for o in group.terms:
            blocks.append((o, column))
            column += self.definition(o).dim
        return blocks

    def width(self, name: str) -> int:
        return sum(self.definition(o).dim for o, _ in self.layout(name))

    def definition(self, term: RewardTerm | TerminationTerm | ObservationTerm) -> TermDef:
        kind = {RewardTerm: "reward", TerminationTerm: "termination", ObservationTerm: "observation"}[
            type(term)
        ]
        return self.library[kind][term.fn]

    @property
    def reward_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rewards)


def _check_number(what: str, value: Any, *, minimum: float | None = None, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanError(f"{what} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise PlanError(f"{what} must be finite, got {value!r}")
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        raise PlanError(f"{what} must be {'>' if strict else '>='} {minimum}, got {value!r}")
    return float(value)


def _unique(where: str, kind: str, items: Any, cls: type) -> tuple:
    items = tuple(items)
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, cls):
            raise PlanError(f"{where}: {kind} entries must be {cls.__name__}, got {item!r}")
        if item.name in seen:
            raise PlanError(
                f"{where}: duplicate {kind} name {item.name!r}; names are log keys and must be unique"
            )
        seen.add(item.name)
    return items


def _definition(
    where: str,
    kind: TermKind,
    term: Any,
    library: Mapping[str, Mapping[str, TermDef]],
    snapshot_names: frozenset[str],
) -> TermDef:
    fn = term.fn or term.name
    definition = library.get(kind, {}).get(fn)
    if definition is None:
        known = sorted(library.get(kind, {}))
        raise PlanError(f"{where}: unknown {kind} term {fn!r} (in {term.name!r}); known: {', '.join(known)}")
    missing = [name for name in definition.reads if name not in snapshot_names]
    if missing:
        raise PlanError(
            f"{where}: {kind} term {term.name!r} needs {', '.join(missing)}, which the task's snapshot does not have"
        )
    return definition


def _typed_params(
    where: str,
    kind: TermKind,
    term: Any,
    library: Mapping[str, Mapping[str, TermDef]],
    snapshot_names: frozenset[str],
) -> Any:
    definition = _definition(where, kind, term, library, snapshot_names)
    cls = definition.params
    given = term.params
    if isinstance(given, cls):
        given = {f.name: getattr(given, f.name) for f in dataclasses.fields(cls)}
    given = dict(given or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise PlanError(
            f"{where}: {kind} term {term.name!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters are: {', '.join(fields) or 'none'}"
        )
    values = {}
    for name, f in fields.items():
        if name not in given:
            if f.default is dataclasses.MISSING:
                raise PlanError(f"{where}: {kind} term {term.name!r} is missing parameter {name!r}")
            values[name] = f.default
            continue
        what = f"{where}: {kind} term {term.name!r}: parameter {name!r}"
        values[name] = _check_number(
            what, given[name], minimum=f.metadata.get("min"), strict=f.metadata.get("strict", False)
        )
    return cls(**values)


def plan_from_json(text: str, *, base: TaskPlan, source: str = "plan") -> TaskPlan:
    """A plan from its JSON form (``TaskPlan.to_dict``), validated against ``base``'s task and library."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise PlanError(f"{source}: a plan is a JSON object, got {type(data).__name__}")
    if data.get("format") != PLAN_FORMAT:
        raise PlanError(f"{source}: plan format must be {PLAN_FORMAT}, got {data.get('format')!r}")
    if data.get("task") != base.task:
        raise PlanError(f"{source}: this is a {data.get('task')!r} plan, expected {base.task!r}")
    try:
        rewards = [RewardTerm(**r) for r in data.get("rewards", [])]
        terminations = [TerminationTerm(**t) for t in data.get("terminations", [])]
        groups = [
            ObservationGroup(
                name=g["name"],
                include=g.get("include"),
                terms=tuple(ObservationTerm(**o) for o in g["terms"]),
            )
            for g in data.get("observations", [])
        ]
    except (TypeError, KeyError) as exc:
        raise PlanError(f"{source}: malformed term entry ({exc})") from None
    return TaskPlan.build(
        task=base.task,
        rewards=rewards,
        terminations=terminations,
        observations=groups,
        noise_level=data.get("noise_level", base.noise_level),
        dt=data.get("dt", base.dt),
        library=base.library,
        snapshot_names=base.snapshot_names,
    )
