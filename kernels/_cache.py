"""Where Numba keeps compiled kernels: a directory keyed by a hash of this package's sources.

Numba's on-disk cache is invalidated only by edits to the file that defines a kernel. Kernels here also read
constants and helpers from other modules (task constants, ``geometry``), frozen in at compile time, so an edit
there would leave a stale compiled kernel in use. Keying the cache directory by every source file of the
package makes any edit start from a fresh directory. ``NUMBA_CACHE_DIR``, when set, is the base directory.
``kernels/cost/`` (the callgrind driver, no compiled code) is left out of the key, so editing it keeps the cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

PACKAGE = Path(__file__).resolve().parent


def source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "cost" and path.parent.parent == PACKAGE:
            continue
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def configure() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "fusegate", "numba"
    )
    directory = Path(base) / source_hash()
    numba.config.CACHE_DIR = str(directory)
    return directory
