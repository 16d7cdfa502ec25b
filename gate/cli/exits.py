"""The exit codes of every ``fusegate`` command: one table a CI script can trust (docs/cli.md#exit-codes).

| code | meaning |
|---|---|
| 0 | approve (``gate``, ``run``); success for the other commands |
| 1 | reject; for the other commands, what they checked failed (parity, an upload refused, no more rounds) |
| 2 | inconclusive: run more rounds |
| 3 | error: the gate could not judge (nothing measured, a machine silent, the service gave no answer, a head that
does not merge into its base, the head's pins do not install) |
| 64 | usage: an unknown option or a bad value (sysexits' EX_USAGE); the command's usage is printed |
| 75 | ``upload``: the service is unreachable; the results are kept on disk for the next upload (EX_TEMPFAIL) |
| 78 | configuration: a bad policy, an unreachable or unmigrated store, no valgrind, a placement this machine cannot
give, a bad setting (sysexits' EX_CONFIG) |
"""

from __future__ import annotations

APPROVE, REJECT, INCONCLUSIVE, ERROR = 0, 1, 2, 3
USAGE = 64
KEPT = 75  # EX_TEMPFAIL: ``upload`` kept the results on disk for the next upload
CONFIG = 78

# Every code in a word, as ``fusegate --help`` says them (docs/cli.md#exit-codes has the long form).
CODES = {
    APPROVE: "approve",
    REJECT: "reject",
    INCONCLUSIVE: "inconclusive",
    ERROR: "error",
    USAGE: "usage",
    KEPT: "upload kept its results (service unreachable)",
    CONFIG: "configuration",
}


def epilog() -> str:
    return (
        "exit codes: "
        + ", ".join(f"{code} {word}" for code, word in CODES.items())
        + " (docs/cli.md#exit-codes)"
    )


# Errors that mean "fix the configuration", by class name (the modules that define them import Numba or the
# store: the command line names them without importing them).
_CONFIG = frozenset(
    {
        "PolicyError",
        "StoreError",
        "SchemaError",
        "SettingsError",
        "CostError",
        "PlacementError",
        "ProfileError",
    }
)


# Errors that mean "the gate could not judge": a head that does not merge into its base, dependency pins of the
# head that do not install.
_ERROR = frozenset({"PairError", "EnvError"})


def of_error(exc: BaseException) -> int:
    """The exit code of an error that reached the command line."""
    names = {k.__name__ for k in type(exc).__mro__}
    return ERROR if names & _ERROR else CONFIG if names & _CONFIG else USAGE
