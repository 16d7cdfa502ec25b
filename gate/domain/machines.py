"""What names and identifies a machine: its name, its placements' names and the hash that makes two machines
one kind."""

from __future__ import annotations

import hashlib
import json
import re

# A machine's name (asv's machine name, a token's machine, a URL path segment on the dashboard): letters, digits,
# ``.``, ``_`` and ``-``, starting with a letter or digit, at most 100 characters. Host names fit; a name with a
# ``/``, a blank or a control character is refused when it arrives, so every stored name is a safe path segment.
MACHINE_NAME_MAX = 100
MACHINE_NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{MACHINE_NAME_MAX - 1}}}$"
_MACHINE_NAME = re.compile(MACHINE_NAME_PATTERN)


def machine_name_problem(name: object) -> str | None:
    """Why ``name`` is not a machine name, or None when it is one."""
    if not isinstance(name, str):
        return f"a machine name is a string, got {type(name).__name__}"
    if _MACHINE_NAME.fullmatch(name):
        return None
    return (
        f"{name[:40]!r}{'...' if len(name) > 40 else ''} is not a machine name: use 1-{MACHINE_NAME_MAX} letters, "
        "digits, '.', '_' or '-', starting with a letter or digit (asv run --machine NAME)"
    )


def machine_id(fingerprint: dict) -> str:
    """A stable hash of what makes two machines comparable: CPU, topology and caches.

    Memory sizes are recorded but not hashed: on VMs with ballooned memory a NUMA node's MemTotal drifts by
    128 MB steps between processes (7897 / 8025 / 8153 MB within one run here), which would split one machine
    into several. Host name and kernel are not hashed either, so identical runners compare as one kind.
    """
    keys = ("arch", "cpu_model", "cpu_flags", "logical_cpus", "physical_cores", "sockets", "caches")
    payload = {k: fingerprint[k] for k in keys}
    payload["numa_nodes"] = {node: info["cpus"] for node, info in fingerprint["numa_nodes"].items()}
    payload = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# A machine with several NUMA nodes is measured at several placements per commit (gate.meter.plan), each under its
# own asv machine name, ``<machine>__<label>``, and judged on its own: node<N> (one node bound) or interleaved.
# "__" because no hostname (asv's default machine name) has "_": a cluster's compute-node12 stays a machine.
PLACEMENT_LABEL = re.compile(r"node[0-9]+|interleaved")


def placement_machine(machine: str, label: str) -> str:
    """The asv machine name of ``machine``'s placement ``label`` ("" for a machine's only placement)."""
    if label and not PLACEMENT_LABEL.fullmatch(label):
        raise ValueError(f"unknown placement label {label!r}: node<N> or interleaved")
    return f"{machine}__{label}" if label else machine


def host_of(name: str) -> str:
    """The machine a placement's asv machine name belongs to (the name itself when it names no placement)."""
    host, sep, label = name.rpartition("__")
    return host if sep and host and PLACEMENT_LABEL.fullmatch(label) else name
