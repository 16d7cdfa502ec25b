"""The row kinds' declarations (``gate.evaluate.reads``), registered by kind: every module of
``evaluation.KINDS`` and the meter's and machines' rows declare their ``READS`` once; what asks for more rounds
reads them here."""

from __future__ import annotations

from gate.domain.vocabulary import Kind
from gate.evaluate import evaluation, machine, meter
from gate.evaluate.reads import Reads, Selection, selections

DECLARED: dict[Kind, Reads] = {m.READS.kind: m.READS for m in (*evaluation.KINDS, meter, machine)}


def declared(kind: Kind | str) -> Reads:
    """The declaration of ``kind`` (a stored row's kind may be its string)."""
    return DECLARED[Kind(kind)]


def selections_of(row, baseline: str) -> list[Selection]:
    """The asv selections whose new processes add samples to ``row``, by its kind's declaration."""
    return selections(declared(row.kind), row, baseline)
