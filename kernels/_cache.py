"""Where Numba keeps compiled kernels: a directory keyed by a hash of this package's sources.

Numba's on-disk cache is invalidated only by edits to the file that defines a kernel. Kernels here also read
constants and helpers from other modules (task constants, ``geometry``), frozen in at compile time, so an edit
there would leave a stale compiled kernel in use. Keying the cache directory by every source file of the
package makes any edit start from a fresh directory. ``NUMBA_CACHE_DIR``, when set, is the base directory.
``kernels/cost/`` (the callgrind driver, no compiled code) is left out of the key, so editing it keeps the cache.

Numba files a cached function under a hash of its source directory's absolute path, so every clone, worktree
and asv environment compiled every kernel again (~2 minutes here) for identical sources. ``PackageLocator``
files this package's functions under their place in the package instead: the keyed directory already says
which sources they are, and Numba still checks each file's content hash before it loads.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba.core import caching

PACKAGE = Path(__file__).resolve().parent
# Numba's own locators, tried after ours (NUMBA_CACHE_LOCATOR_CLASSES replaces the list).
_NUMBA_LOCATORS = (
    "UserProvidedCacheLocator,InTreeCacheLocator,UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator"
)


class PackageLocator(caching.UserProvidedCacheLocator):
    """Cache a function of this package under ``<cache dir>/package/<its directory in the package>``."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        inside = Path(py_file).resolve().parent.relative_to(PACKAGE)
        self._cache_path = os.path.join(numba.config.CACHE_DIR, "package", *inside.parts)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(PACKAGE)
        except ValueError:
            return None  # not ours (e.g. a generated module, already filed by content): Numba's locators
        return super().from_function(py_func, py_file)


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
    if not numba.config.CACHE_LOCATOR_CLASSES:  # a user's own list wins
        numba.config.CACHE_LOCATOR_CLASSES = f"{__name__}.PackageLocator,{_NUMBA_LOCATORS}"
    return directory
