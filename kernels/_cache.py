"""Where Numba keeps compiled kernels: per module, a directory keyed by the sources that module depends on.

Numba's on-disk cache is invalidated only by edits to the file that defines a kernel. Kernels here also read
constants and helpers from other modules (task layouts, ``geometry``, ``scalar``), frozen in at compile time, so
an edit there would leave a stale compiled kernel in use. ``PackageLocator`` files each module's compiled
functions under ``deps_key`` of that module: a hash of its own source and of every ``kernels`` module it imports,
transitively (read from the import statements, so it is known before the module has finished importing). An
edit to a task's layout recompiles that task's kernels; an edit under ``kernels/sim`` or to the other task
recompiles nothing it does not reach. Generated modules are keyed the same way (``kernels.assembled.codegen``).

The cache root, ``<NUMBA_CACHE_DIR or ~/.cache/fusegate/numba>/<source_hash()>`` (``CACHE_DIR``), is keyed by
this module (the keying scheme) only. Importing this module configures Numba to use it, so every module of the
package that defines a cached kernel imports it (directly, or through ``kernels.kernel``, ``kernels.scalar`` or
``kernels.geometry``) before the kernel is defined; the package itself, its registry and the task specs do not
import Numba.

Numba files a cached function under a hash of its source directory's absolute path, so every clone, worktree
and asv environment compiled every kernel again (~2 minutes here) for identical sources. ``PackageLocator``
files this package's functions under their place in the package instead: the key already says which sources
they are, and Numba still checks each file's content hash before it loads.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import numba
from numba.core import caching

PACKAGE = Path(__file__).resolve().parent
# Numba's own locators, tried after ours (NUMBA_CACHE_LOCATOR_CLASSES replaces the list).
_NUMBA_LOCATORS = (
    "UserProvidedCacheLocator,InTreeCacheLocator,UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator"
)


class PackageLocator(caching.UserProvidedCacheLocator):
    """Cache a function of this package under ``<cache dir>/package/<its module in the package>-<deps key>``."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        path = Path(py_file).resolve()
        inside = path.parent.relative_to(PACKAGE)
        key = deps_key([path])[:16]
        self._cache_path = os.path.join(
            numba.config.CACHE_DIR, "package", *inside.parts, f"{path.stem}-{key}"
        )

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(PACKAGE)
        except ValueError:
            return None  # not ours (e.g. a generated module, already filed by content): Numba's locators
        return super().from_function(py_func, py_file)


# --- what a module depends on ---------------------------------------------------------------------------------


def _file_of(module: str) -> Path | None:
    """The source file of ``kernels[.x[.y]]``, or None if it is not a module of this package."""
    parts = module.split(".")
    if parts[0] != PACKAGE.name:
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _package_of(path: Path) -> str:
    """The package a module file belongs to (its own, for an ``__init__.py``)."""
    return ".".join([PACKAGE.name, *path.relative_to(PACKAGE).parent.parts])


def imports(text: str, path: Path | None = None) -> set[Path]:
    """The files of the ``kernels`` modules that ``text`` imports anywhere (also inside functions: a superset)."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                if path is None:
                    continue
                package = _package_of(path).split(".")
                package = package[: len(package) - node.level + 1]
                module = ".".join([*package, module] if module else package)
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            file = _file_of(name)
            if file is not None:
                found.add(file)
    return found


@functools.cache
def _closure(path: Path) -> frozenset[Path]:
    seen = {path}
    todo = [path]
    while todo:
        current = todo.pop()
        for dep in imports(current.read_text(), current):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return frozenset(seen)


def closure(path: Path) -> frozenset[Path]:
    """``path`` and every ``kernels`` module it imports, transitively."""
    return _closure(Path(path).resolve())


def deps_key(modules: Iterable[str | Path], *, source: str | None = None) -> str:
    """sha256 of the sources of ``modules`` (files or dotted names) and of everything they import, plus, for
    generated code, ``source`` and everything it imports."""
    files: set[Path] = set()
    for module in modules:
        path = _file_of(module) if isinstance(module, str) else Path(module).resolve()
        if path is None:
            raise ValueError(f"{module!r} is not a module of the {PACKAGE.name} package")
        files |= closure(path)
    digest = hashlib.sha256()
    if source is not None:
        for path in imports(source):
            files |= closure(path)
        digest.update(source.encode())
    for path in sorted(files):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def source_hash() -> str:
    """The key of the cache root: this module, which decides how everything under it is keyed."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def configure() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "fusegate", "numba"
    )
    directory = Path(base) / source_hash()
    numba.config.CACHE_DIR = str(directory)
    if not numba.config.CACHE_LOCATOR_CLASSES:  # a user's own list wins
        numba.config.CACHE_LOCATOR_CLASSES = f"{__name__}.PackageLocator,{_NUMBA_LOCATORS}"
    return directory


CACHE_DIR = configure()  # before any cached kernel of the package is defined
