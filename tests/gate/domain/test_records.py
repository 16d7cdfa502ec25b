"""One record per concept (``gate.domain``): every other declaration of it, the row being judged, the wire schema
and the table, has the record's fields with the record's types, so a field added to one and not the others fails
here. Each case names the fields a copy may have beyond the record (a table's keys, a row's working state) or lack
(counts made in an evaluation, never stored)."""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import StrEnum

import pytest
from sqlalchemy import inspect

from gate.api.schemas import AcceptanceOut, ComparisonOut, EvaluationOut
from gate.domain.evaluations import Acceptance, ComparisonRecord, EvaluationRecord
from gate.domain.uploads import ResultRecord
from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate.cells import Summary
from gate.evaluate.row import Row
from gate.store import models
from gate.store.queries.measured import SummaryView


def _plain(hint) -> object:
    """A type as the comparison sees it: a generic by its origin (``list[list[float]]`` is a JSON ``list``)."""
    if isinstance(hint, types.UnionType):
        return types.UnionType, frozenset(_plain(a) for a in typing.get_args(hint))
    return typing.get_origin(hint) or hint


def _record(cls) -> dict[str, object]:
    return {f.name: typing.get_type_hints(cls)[f.name] for f in dataclasses.fields(cls)}


def _wire(model) -> dict[str, object]:
    return {name: info.annotation for name, info in model.model_fields.items()}


def _table(model) -> dict[str, object]:
    """A table's columns by the Python type its ``Mapped[...]`` annotation says, checked against the column:
    nullable exactly when the annotation allows None, an enum stored through ``Vocabulary`` of that enum."""
    hints = typing.get_type_hints(model, vars(models))
    out = {}
    for column in inspect(model).columns:
        (hint,) = typing.get_args(hints[column.key])
        assert column.nullable == (types.NoneType in typing.get_args(hint)), f"{model.__name__}.{column.key}"
        bare = typing.get_args(hint)[0] if isinstance(hint, types.UnionType) else hint
        if isinstance(bare, type) and issubclass(bare, StrEnum):
            assert column.type.python_type is bare, (
                f"{model.__name__}.{column.key} is stored as {column.type}"
            )
        out[column.key] = hint
    return out


def _protocol(cls) -> dict[str, object]:
    return typing.get_type_hints(cls)


CASES = {
    "Row (gate.evaluate.row)": (
        ComparisonRecord,
        lambda: _record(Row),
        {"estimate", "fail_margin", "cost", "cost_error", "moments", "faster", "q_faster", "time_decision"},
        set(),
    ),
    "ComparisonOut (gate.api.schemas)": (ComparisonRecord, lambda: _wire(ComparisonOut), set(), set()),
    "Comparison (gate.store.models)": (
        ComparisonRecord,
        lambda: _table(models.Comparison),
        {"id", "evaluation_id"},
        set(),
    ),
    "AcceptanceOut (gate.api.schemas)": (Acceptance, lambda: _wire(AcceptanceOut), set(), set()),
    "RegressionAcceptance (gate.store.models)": (
        Acceptance,
        lambda: _table(models.RegressionAcceptance),
        {"id", "recorded_at"},
        {"accepted", "worse"},  # counted in each evaluation, kept with it
    ),
    "Result (gate.store.models)": (ResultRecord, lambda: _table(models.Result), {"id", "run_id"}, set()),
    "Summary (gate.evaluate.cells)": (
        SummaryView,
        lambda: _protocol(Summary),
        set(),
        {"id", "machine_id", "commit_id", "placement_id", "updated_at"},  # where it is stored
    ),
    "CellSummary (gate.store.models)": (SummaryView, lambda: _table(models.CellSummary), set(), set()),
}
ROWS_DECIDED_LATER = {
    "Row (gate.evaluate.row)": {"decision": Decision | None}
}  # None until the family decides


@pytest.mark.parametrize("name", CASES)
def test_every_copy_of_a_record_has_its_fields_and_types(name):
    record, read, extra, lacking = CASES[name]
    copy = read()
    fields = _record(record)
    assert set(copy) - set(fields) == extra, f"{name} has fields the record {record.__name__} lacks"
    assert set(fields) - set(copy) == lacking, f"{name} lacks fields of the record {record.__name__}"
    expected = {**fields, **ROWS_DECIDED_LATER.get(name, {})}
    differ = {
        f: (copy[f], expected[f]) for f in set(fields) & set(copy) if _plain(copy[f]) != _plain(expected[f])
    }
    assert differ == {}, f"{name}: (its type, the record's) of each field that differs"


def test_a_field_added_to_one_copy_only_fails_the_check():
    @dataclasses.dataclass(kw_only=True)
    class Wider(Row):
        speedup: float | None = None

    fields, copy = _record(ComparisonRecord), _record(Wider)
    assert set(copy) - set(fields) - CASES["Row (gate.evaluate.row)"][2] == {"speedup"}


def test_an_evaluation_on_the_wire_has_the_records_fields():
    assert set(EvaluationOut.model_fields) == set(_record(EvaluationRecord))
    assert EvaluationOut.model_fields["verdict"].annotation is _record(EvaluationRecord)["verdict"]


def test_records_keep_enums_whatever_they_are_given():
    blank = dict.fromkeys(("ratio", "low", "high", "p_value", "q_value", "cost_ratio", "num_envs", "threads"))
    values = dict(
        machine="m", kind="head_vs_base", task="g1_walk", impl="a", baseline="b", detail="", margin=0.05
    )
    values |= dict(samples=0, groups=0, decision="pass", signal="cost", reason="", **blank)
    r = ComparisonRecord(**values)
    assert (r.kind, r.decision, r.signal) == (Kind.HEAD_VS_BASE, Decision.PASS, Signal.COST)
    with pytest.raises(ValueError, match="'sideways' is not a valid Decision"):
        ComparisonRecord(**{**values, "decision": "sideways"})
