"""``machine`` rows: a required machine that reported nothing, one whose hardware differs between base and head
under one name, one whose results hold nothing the policy compares."""

from __future__ import annotations

from gate.domain.vocabulary import Kind
from gate.evaluate.reads import Reads
from gate.evaluate.row import Row, machine_error

READS = Reads(kind=Kind.MACHINE)  # a machine's absence or change: nothing to add


def missing(required: list[str], reported: list[str], head_sha: str) -> list[Row]:
    reason = f"required machine reported no results for head {head_sha[:12]}"
    return [machine_error(m, reason) for m in required if m not in reported]


def hardware_changes(base: dict[str, set[str]], head: dict[str, set[str]], machines: list[str]) -> list[Row]:
    """``base``, ``head``: machine -> the hardware fingerprint hashes of its runs of each commit."""
    return [
        machine_error(
            m,
            f"hardware fingerprint differs between base ({', '.join(sorted(base[m]))}) and head "
            f"({', '.join(sorted(head[m]))}): the two commits were measured on different machines under one name",
        )
        for m in machines
        if m in base and m in head and base[m] != head[m]
    ]


def nothing_compared(rows: list[Row], machines: list[str]) -> list[Row]:
    reason = "reported results, but none the policy compares (no paired or timing cells)"
    return [machine_error(m, reason) for m in machines if not any(r.machine == m for r in rows)]
