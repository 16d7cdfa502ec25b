"""fusegate's asv suites (``benchmarks/_common.py`` has the shared setup).

asv imports this package before any suite module, so ``STARTED_S`` is how long the benchmark process had been
alive before fusegate's code ran: the interpreter's and asv's own start-up (``_common.process_record``). Under
asv's forkserver (asv.conf.json ``launch_method``) a benchmark process is forked from a server that already
imported the suites: its age counts from the fork, and its start-up and imports are 0.
"""

from __future__ import annotations

import os


def process_age() -> float | None:
    """Seconds since this process started (Linux ``/proc``; None elsewhere), to 10 ms."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
            return float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


STARTED_S = process_age()


def _forked() -> None:
    global STARTED_S
    STARTED_S = 0.0


os.register_at_fork(after_in_child=_forked)
