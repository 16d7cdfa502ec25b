"""What every part of an upload is checked against: the error that names file and field, and the values the
store can hold (printable names, 32-bit cell counts, JSON without NaN, NUL or unpaired surrogates)."""

from __future__ import annotations

import json
import re
from typing import Any

SHA = re.compile(r"^[0-9a-f]{40}$")
MAX_CELL = 2**31 - 1  # num_envs and threads: the store's cell columns are 32-bit
# An escaped NUL in JSON text (not an escaped backslash followed by u0000).
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class IngestError(ValueError):
    """A bundle that cannot be stored: which file, which field, what is wrong, what to do."""

    def __init__(self, file: str, field_: str, message: str):
        self.file, self.field, self.message = file, field_, message
        super().__init__(f"{file}: {field_}: {message}")


def plain(value: Any, file: str, *, where: str = "") -> None:
    """Refuse what the store cannot hold in a parsed JSON value it keeps as JSON (machine.json, the sidecar's
    machine, software and placement, a failure's message): NaN or Infinity, a NUL, an unpaired surrogate. The
    check is one C-speed ``json.dumps`` (a Python walk of every record cost 0.1 s per upload)."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")
    except ValueError:  # UnicodeEncodeError is one
        raise IngestError(
            file,
            where or "(value)",
            "holds NaN or Infinity (JSON has no such number) or an unpaired surrogate",
        ) from None
    if _NUL.search(text):
        raise IngestError(
            file, where or "(value)", "holds a NUL character (\\u0000): the store cannot keep it"
        )


def is_name(text: object, longest: int = 64) -> bool:
    """A name the store keeps as text: 1-``longest`` printable characters (no NUL, no control character, no
    unpaired surrogate)."""
    return isinstance(text, str) and 0 < len(text) <= longest and text.isprintable()


def is_count(value: object) -> bool:
    """A cell's num_envs or threads: a positive integer the store can hold."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_CELL


def need(mapping: dict, key: str, kind: type | tuple[type, ...], file: str, where: str = "") -> Any:
    """``mapping[key]`` when it is there and of ``kind``, else IngestError naming ``where`` + ``key``."""
    name = f"{where}{key}"
    if not isinstance(mapping, dict) or key not in mapping:
        raise IngestError(file, name, "missing")
    value = mapping[key]
    if not isinstance(value, kind):
        expected = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
        raise IngestError(file, name, f"expected {expected}, got {type(value).__name__} {value!r:.80}")
    return value
