"""Generated kernel modules: Python source written to a real file, imported from there, cached by Numba.

A generated module lives at ``<numba cache>/assembled/<task>_<plan hash>_nb<numba>_ll<llvmlite>.py``. The
directory is already keyed by a hash of every ``kernels/`` source (``kernels._cache``), so an edit to a
generator or a helper never reuses an old module; the file name adds the plan hash and the Numba and llvmlite
versions. A file is written only when missing (atomically, so concurrent processes cannot see half a file) and
never rewritten, because Numba's on-disk cache of the kernel is keyed by the file's path and modification time:
a fresh process imports the module and loads the compiled kernel from that cache without compiling.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import llvmlite
import numba

import kernels

_LOADED: dict[Path, ModuleType] = {}


class Source:
    """Lines of Python with an indentation level."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.level = 0

    def __call__(self, *lines: str) -> Source:
        self.lines.extend(("    " * self.level + line) if line else "" for line in lines)
        return self

    def indent(self) -> Source:
        self.level += 1
        return self

    def dedent(self) -> Source:
        self.level -= 1
        return self

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def literal(x: float) -> str:
    """A float as Python source that reads back to the same float64."""
    return repr(float(x))


def module_path(task: str, plan_hash: str) -> Path:
    name = f"{task}_{plan_hash[:16]}_nb{numba.__version__}_ll{llvmlite.__version__}".replace(".", "_")
    return Path(kernels.NUMBA_CACHE_DIR) / "assembled" / f"{name}.py"


def load_module(path: Path, source: str) -> ModuleType:
    """Write ``source`` to ``path`` unless it is already there, and import it (once per process)."""
    if path in _LOADED:
        return _LOADED[path]
    if not path.exists() or path.read_text() != source:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    name = f"fusegate_assembled_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _LOADED[path] = module
    return module
