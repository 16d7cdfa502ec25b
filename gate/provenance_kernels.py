"""What each kernel is made of, and its id: the sources one implementation runs, read from a tree's text.

Each task package of the declared tasks package names its kernels (``TASK = TaskSpec(..., implementations={...})``,
read as a literal, the subject's code not run); a kernel's id (``implementation_id``) covers the pins and the
subject files it reaches: its own module and what it imports, and what runs beside every kernel (the task's
package, its collector env, every module no kernel imports), transitively. Two trees whose ids of a kernel agree
run the same sources for it, so the lockstep pass and the cost driver measure a kernel again only when its own
sources change. Part of the meter (``gate.provenance.METER_FILES``: read from the base like the rest of it).
Standard library only: the benchmark processes compute the ids of the tree they run in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gate import provenance


def _imports(root: Path, path: str, where: provenance.Layout) -> set[str]:
    """The subject modules (repository paths) that the module at ``path`` imports anywhere, also inside
    functions (a superset), relative imports resolved."""
    import ast

    package = path.split("/")[:-1]
    found = set()
    for node in ast.walk(ast.parse((root / path).read_bytes())):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".") if node.module else []
            if node.level:
                module = package[: len(package) - node.level + 1] + module
            names = [module, *([*module, alias.name] for alias in node.names)]
        else:
            continue
        for parts in names:
            for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
                if where.is_subject(candidate) and (root / candidate).is_file():
                    found.add(candidate)
    return found


def implementation_id(root: Path, entry: str, entries: Iterable[str], *, beside: Iterable[str] = ()) -> str:
    """The id of what one implementation's kernel is made of, in the tree at ``root`` as it is on disk: the pins
    and every subject file but those only other implementations reach. What runs beside every kernel is part of
    each: every module no implementation imports (``entries``: repository paths of every kernel's module), the
    modules of ``beside`` (what the registry imports by name: each task's package and collector env), and
    everything they import, transitively. A module some implementations import belongs to those, with the
    packages above each module: an edit to one implementation's module, or to a module only some
    implementations import (the code generator of the generated kernels), leaves the others' ids alone; an edit
    to anything every kernel runs beside (a task's contract or plan, the registry) changes every id. A module
    that does not parse: the whole subject's id for the kernels that reach it."""
    return _implementation_ids(Path(root), [entry], entries, beside)[entry]


def _implementation_ids(
    root: Path, wanted: Iterable[str], entries: Iterable[str], beside: Iterable[str] = ()
) -> dict[str, str]:
    """``implementation_id`` of each of ``wanted``, reading and parsing each subject file at most once."""
    entries = set(entries)
    where = provenance.on_disk(root)
    subject = {f for f in provenance.files_under(root, where.dirs) if where.is_subject(f)}
    modules = {f for f in subject if f.endswith(".py")}
    blobs = {f: provenance.blob_id((root / f).read_bytes()) for f in subject}
    pins = (f"{provenance.PINS}#dependencies", provenance.pins_id(provenance.pins_text(root)))
    graph: dict[str, set[str]] = {}
    broken: set[str] = set()

    def closure(starts: Iterable[str]) -> set[str]:
        reach = set(starts)
        todo = list(reach)
        while todo:
            module = todo.pop()
            if module not in graph:
                try:
                    graph[module] = _imports(root, module, where)
                except (OSError, SyntaxError, ValueError):
                    graph[module] = set()
                    broken.add(module)
            for dep in graph[module] - reach:
                reach.add(dep)
                todo.append(dep)
        return reach

    own = {entry: closure([entry]) for entry in entries if entry in modules}
    reached = set().union(*own.values()) if own else set()
    # what runs beside every kernel: the modules no implementation imports, and what the registry imports by name
    always = closure({m for m in modules if m not in reached} | (set(beside) & modules))
    out = {}
    for entry in wanted:
        reach = (own[entry] if entry in own else closure([entry])) | always
        while (grown := closure(_with_packages(reach, subject))) != reach:  # a package's imports count too
            reach = grown
        if reach & broken:
            out[entry] = provenance.ids_on_disk(root)["subject"]
            continue
        out[entry] = provenance.content_id(
            [*((f, b) for f, b in blobs.items() if f in reach or f not in modules), pins]
        )
    return out


def _with_packages(reach: set[str], subject: set[str]) -> set[str]:
    """``reach`` with the package ``__init__.py`` above each module: importing a module runs them first."""
    out = set(reach)
    for module in reach:
        parts = module.split("/")[:-1]
        for k in range(1, len(parts) + 1):
            init = "/".join([*parts[:k], "__init__.py"])
            if init in subject:
                out.add(init)
    return out


@dataclass(frozen=True, kw_only=True)
class TaskFiles:
    """One task package's modules as its ``TASK = TaskSpec(...)`` names them (read from its text)."""

    package: str  # repository path of its ``__init__.py``
    kernels: dict[str, str]  # impl -> repository path of its kernel's module
    env: str | None = None  # repository path of its collector env's module


def tasks(root: Path) -> dict[str, TaskFiles]:
    """task -> its ``TaskFiles``, for every package under the declared tasks package of the tree at ``root``
    whose ``__init__.py`` assigns ``TASK = TaskSpec(..., implementations={...})`` with a literal dict (the
    subject's code is not run for it); a package without one, or a tree that declares no subject, has none."""
    root = Path(root)
    where = provenance.on_disk(root)
    if where.declaration is None:
        return {}
    out = {}
    base = root / where.tasks_dir
    for init in sorted(base.glob("*/__init__.py")) if base.is_dir() else ():
        task = init.parent.name
        spec = _spec(init)
        if spec is None:
            continue
        package = f"{where.declaration.tasks}.{task}"
        impls, env = spec
        try:
            kernels = {impl: _module_path(root, package, target) for impl, target in impls.items()}
            env_path = _module_path(root, package, env) if env else None
        except (AttributeError, TypeError, ValueError):
            continue
        out[task] = TaskFiles(package=init.relative_to(root).as_posix(), kernels=kernels, env=env_path)
    return out


def _spec(init: Path) -> tuple[dict[str, str], str | None] | None:
    """(implementations, env) of the module-level ``TASK = TaskSpec(...)`` call in ``init``, or None."""
    import ast

    try:
        tree = ast.parse(init.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        value = getattr(node, "value", None)
        if not any(getattr(t, "id", None) == "TASK" for t in targets) or not isinstance(value, ast.Call):
            continue
        keywords = {k.arg: k.value for k in value.keywords}
        try:
            impls = ast.literal_eval(keywords["implementations"])
            env = ast.literal_eval(keywords["env"]) if "env" in keywords else None
        except (KeyError, ValueError, SyntaxError):
            return None
        if isinstance(impls, dict) and all(isinstance(v, str) for v in impls.values()):
            return impls, env if isinstance(env, str) else None
        return None
    return None


def _module_path(root: Path, package: str, target: str) -> str:
    """The repository path of the module of ``"module:Class"`` (relative to ``package`` when it starts with
    ".")."""
    module = target.split(":")[0]
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        parts = package.split(".")
        if dots > len(parts):
            raise ValueError(f"{target!r} reaches above {package}")
        module = ".".join([*parts[: len(parts) - dots + 1], *filter(None, [module[dots:]])])
    path = module.replace(".", "/")
    return f"{path}/__init__.py" if (root / path / "__init__.py").is_file() else f"{path}.py"


def kernel_files(root: Path) -> dict[tuple[str, str], str]:
    """(task, impl) -> the repository path of its kernel's module in the tree at ``root`` (``tasks``)."""
    return {(task, impl): path for task, found in tasks(root).items() for impl, path in found.kernels.items()}


def kernel_ids(root: Path) -> dict[str, str]:
    """``"task/impl"`` -> ``implementation_id`` of every kernel the task packages of the tree at ``root`` name ({}
    without them). Two trees whose ids of a kernel agree run the same sources for it."""
    found = tasks(root)
    files = {(task, impl): path for task, t in found.items() for impl, path in t.kernels.items()}
    beside = {t.package for t in found.values()} | {t.env for t in found.values() if t.env}
    ids_ = _implementation_ids(Path(root), sorted(set(files.values())), files.values(), beside)
    return {f"{task}/{impl}": ids_[entry] for (task, impl), entry in files.items()}
