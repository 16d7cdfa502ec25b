"""A machine's topology from sysfs: NUMA nodes and their CPUs, physical cores, SMT siblings, sockets.

Read from ``/sys/devices/system`` (or any root holding the same tree: tests use fake ones for machines they cannot
run on). Standard library only: ``fusegate plan`` reads it without importing Numba.

    node/node<N>/cpulist                         "0-39,80-119"
    cpu/cpu<N>/topology/physical_package_id      the socket
    cpu/cpu<N>/topology/core_id                  the core within the socket
    cpu/online                                   "0-159"
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SYSFS = Path("/sys/devices/system")


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-3,8,10-11' -> (0, 1, 2, 3, 8, 10, 11), the kernel's cpulist format; a ValueError says what is wrong."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"bad CPU list {text!r}: {part!r} is not N or N-M") from None
        if first < 0 or last < first:
            raise ValueError(f"bad CPU list {text!r}: {part!r} is not an ascending range of CPU numbers")
        cpus.update(range(first, last + 1))
    if not cpus:
        raise ValueError(f"bad CPU list {text!r}: it names no CPU")
    return tuple(sorted(cpus))


def format_cpu_list(cpus) -> str:
    """(0, 1, 2, 3, 8) -> '0-3,8'."""
    runs, start, prev = [], None, None
    for c in sorted(cpus):
        if prev is not None and c == prev + 1:
            prev = c
            continue
        if start is not None:
            runs.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = c
    if start is not None:
        runs.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(runs)


def node_cpus(node_root: Path) -> dict[int, tuple[int, ...]]:
    """NUMA node -> its CPUs from a sysfs ``node`` directory (nodes without CPUs included, empty)."""
    nodes = {}
    for d in sorted(Path(node_root).glob("node[0-9]*")):
        if (d / "cpulist").exists():
            text = (d / "cpulist").read_text().strip()
            nodes[int(d.name[4:])] = parse_cpu_list(text) if text else ()
    return nodes


@dataclass(frozen=True, kw_only=True)
class Topology:
    nodes: dict[int, tuple[int, ...]]  # NUMA node -> its online CPUs (hardware threads)
    cores: dict[int, tuple[int, int]]  # CPU -> (socket, core): CPUs with the same pair are SMT siblings

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(sorted(c for cpus in self.nodes.values() for c in cpus))

    def physical_cores(self, cpus: tuple[int, ...] | None = None) -> int:
        """Physical cores among ``cpus`` (default: all)."""
        chosen = self.cpus if cpus is None else cpus
        return len({self.cores.get(c, (0, c)) for c in chosen})

    def within(self, allowed) -> Topology:
        """The part of this machine a process limited to the CPUs ``allowed`` can use (a container's cpuset, a
        ``taskset``): nodes without any of them dropped."""
        keep = set(allowed)
        nodes = {n: tuple(c for c in cpus if c in keep) for n, cpus in self.nodes.items()}
        nodes = {n: cpus for n, cpus in nodes.items() if cpus}
        if not nodes:
            raise ValueError(f"none of the CPUs {format_cpu_list(keep)} is in this topology")
        return Topology(nodes=nodes, cores={c: v for c, v in self.cores.items() if c in keep})

    @property
    def sockets(self) -> int:
        return len({socket for socket, _ in self.cores.values()}) or 1

    @property
    def smt(self) -> int:
        """Hardware threads per core (1: no SMT)."""
        return max(1, len(self.cpus) // max(1, self.physical_cores()))

    def describe(self) -> str:
        return (
            f"{len(self.cpus)} hardware threads, {self.physical_cores()} cores, {self.sockets} socket(s), "
            f"{len(self.nodes)} NUMA node(s)"
        )

    def to_dict(self) -> dict:
        return {
            "nodes": {str(k): list(v) for k, v in self.nodes.items()},
            "cores": {str(k): list(v) for k, v in self.cores.items()},
        }

    @classmethod
    def from_dict(cls, data: dict) -> Topology:
        return cls(
            nodes={int(k): tuple(v) for k, v in data["nodes"].items()},
            cores={int(k): (int(v[0]), int(v[1])) for k, v in data["cores"].items()},
        )


def read(root: Path = SYSFS) -> Topology:
    """The topology under ``root`` (a sysfs ``devices/system`` directory). A machine without NUMA in sysfs is one
    node holding every online CPU."""
    root = Path(root)
    online = (
        parse_cpu_list((root / "cpu" / "online").read_text()) if (root / "cpu" / "online").exists() else ()
    )
    nodes = {n: cpus for n, cpus in node_cpus(root / "node").items() if cpus}
    if not nodes:
        nodes = {0: online or tuple(range(1))}
    cores = {}
    for cpu in (c for cpus in nodes.values() for c in cpus):
        topo = root / "cpu" / f"cpu{cpu}" / "topology"
        try:
            cores[cpu] = (
                int((topo / "physical_package_id").read_text()),
                int((topo / "core_id").read_text()),
            )
        except (OSError, ValueError):
            cores[cpu] = (0, cpu)  # unknown: a core of its own
    return Topology(nodes=nodes, cores=cores)


def load(path: Path) -> Topology:
    """A topology saved as JSON (``Topology.to_dict``), or read from a sysfs-shaped directory."""
    path = Path(path)
    if path.is_dir():
        return read(path)
    try:
        return Topology.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"{path}: not a topology (a sysfs devices/system directory or its JSON): {exc}"
        ) from None


def write_fake(root: Path, *, sockets: int, cores_per_socket: int, smt: int, nodes: int) -> Path:
    """A sysfs-shaped tree of a machine (Linux numbering: every core's first thread, then the siblings), for
    planning machines this one is not. Returns ``root``."""
    root = Path(root)
    total_cores = sockets * cores_per_socket
    cpus = total_cores * smt
    (root / "cpu").mkdir(parents=True, exist_ok=True)
    (root / "cpu" / "online").write_text(f"0-{cpus - 1}\n")
    per_node = total_cores // nodes
    node_cpus: dict[int, list[int]] = {n: [] for n in range(nodes)}
    for cpu in range(cpus):
        core = cpu % total_cores  # sibling k of core c is CPU c + k * total_cores
        socket, core_id = divmod(core, cores_per_socket)
        topo = root / "cpu" / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True, exist_ok=True)
        (topo / "physical_package_id").write_text(f"{socket}\n")
        (topo / "core_id").write_text(f"{core_id}\n")
        node_cpus[min(core // per_node, nodes - 1)].append(cpu)
    for n, members in node_cpus.items():
        d = root / "node" / f"node{n}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "cpulist").write_text(format_cpu_list(members) + "\n")
    return root
