"""One implementation's subject id: what its kernel is made of, so an edit to another kernel's module leaves it."""

from pathlib import Path

from gate import provenance, provenance_kernels

FILES = {
    "kernels/__init__.py": "",
    "kernels/shared.py": "X = 1\n",
    "kernels/one/__init__.py": "",
    "kernels/one/walk.py": "from kernels.shared import X\n",
    "kernels/two/walk.py": "import kernels.shared\n",
    "kernels/one/generic.py": "def f():\n    from .walk import X  # reached only inside a function\n",
    "kernels/data.txt": "not a module",
    "gate/meter/driver.py": "meter = 1\n",
}
ENTRIES = ["kernels/one/walk.py", "kernels/two/walk.py", "kernels/one/generic.py"]


def _tree(root: Path) -> Path:
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "pyproject.toml").write_text('[project]\ndependencies = ["numpy==2.4.6"]\n')
    return root


def _ids(root: Path) -> dict[str, str]:
    return {e: provenance_kernels.implementation_id(root, e, ENTRIES) for e in ENTRIES}


def test_an_edit_reaches_the_ids_of_the_kernels_that_import_it_and_no_other(tmp_path):
    root = _tree(tmp_path)
    before = _ids(root)
    assert len(set(before.values())) == 3
    # no other kernel's module left out: the whole subject's id
    assert (
        provenance_kernels.implementation_id(root, ENTRIES[0], []) == provenance.ids_on_disk(root)["subject"]
    )

    (root / "kernels/two/walk.py").write_text("import kernels.shared  # a comment\n")
    after = _ids(root)
    assert after["kernels/two/walk.py"] != before["kernels/two/walk.py"]
    assert {e: after[e] for e in ENTRIES[::2]} == {e: before[e] for e in ENTRIES[::2]}

    (root / "kernels/one/walk.py").write_text("from kernels.shared import X  # a comment\n")
    again = _ids(root)
    assert again["kernels/one/walk.py"] != after["kernels/one/walk.py"]
    assert again["kernels/one/generic.py"] != after["kernels/one/generic.py"]  # it imports walk (relative)
    assert again["kernels/two/walk.py"] == after["kernels/two/walk.py"]


def test_shared_code_pins_and_a_module_that_does_not_parse_reach_every_id(tmp_path):
    root = _tree(tmp_path)
    before = _ids(root)
    (root / "gate/meter/driver.py").write_text("meter = 2\n")
    (root / "kernels/data.txt").write_text("still not a module")
    assert _ids(root) == before  # the meter and non-modules are not the subject
    (root / "kernels/shared.py").write_text("X = 2\n")
    shared = _ids(root)
    assert all(shared[e] != before[e] for e in ENTRIES)
    (root / "pyproject.toml").write_text('[project]\ndependencies = ["numpy==2.4.5"]\n')
    pins = _ids(root)
    assert all(pins[e] != shared[e] for e in ENTRIES)
    (root / "kernels/one/walk.py").write_text("from kernels.shared import (\n")
    broken = provenance_kernels.implementation_id(root, "kernels/one/walk.py", ENTRIES)
    assert broken == provenance.ids_on_disk(root)["subject"]


def test_a_kernel_module_a_shared_module_imports_is_part_of_every_id(tmp_path):
    """A shared module (e.g. the collector) runs beside every kernel: a kernel module it imports is theirs too."""
    root = _tree(tmp_path)
    (root / "kernels/sim.py").write_text("def step():\n    from kernels.two import walk\n")
    before = _ids(root)
    (root / "kernels/two/walk.py").write_text("import kernels.shared  # a comment\n")
    edited = _ids(root)
    assert all(edited[e] != before[e] for e in ENTRIES)
    (root / "kernels/one/generic.py").write_text("def f():\n    from .walk import X  # a comment\n")
    after = _ids(root)  # a kernel module no shared module imports still leaves the others' ids alone
    assert after["kernels/one/generic.py"] != edited["kernels/one/generic.py"]
    assert {e: after[e] for e in ENTRIES[:2]} == {e: edited[e] for e in ENTRIES[:2]}


TABLE = """[tool.fusegate]
version = 1
tasks = "kernels.tasks"
baseline = "one"
[tool.fusegate.grid]
quick = { scales = [64], paired = [] }
full = { scales = [64, 128], paired = [] }
"""


def _declared(root: Path) -> Path:
    """A tree that declares its subject: two task packages whose ``TASK`` names their kernels, relative and
    absolute."""
    _tree(root)
    (root / "pyproject.toml").write_text('[project]\ndependencies = ["numpy==2.4.6"]\n' + TABLE)
    files = {
        "kernels/tasks/__init__.py": "",
        "kernels/tasks/walk/__init__.py": (
            "from kernels.spec import TaskSpec\nfrom .contract import CONTRACT\n"
            "TASK = TaskSpec(contract=CONTRACT, implementations={\n"
            '    "one": ".fast:One", "two": "kernels.two.walk:W"}, reference="one", env=".env:Env")\n'
        ),
        "kernels/tasks/walk/contract.py": "CONTRACT = 1\n",
        "kernels/tasks/walk/fast.py": "from kernels.shared import X\n",
        "kernels/tasks/walk/env.py": "E = 1\n",
        "kernels/tasks/walk/meter.py": "ATOL = 1e-5\n",
        "kernels/tasks/run/__init__.py": 'TASK = TaskSpec(implementations={"one": "kernels.one.generic:G"})\n',
        "kernels/tasks/notes/__init__.py": "TASK = make()  # not a literal call: no kernels\n",
        "kernels/spec.py": "class TaskSpec: ...\n",
        "kernels/synthetic.py": "MARGIN = 1e-3\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_every_kernel_id_of_a_tree_at_once_parses_each_module_once(tmp_path, monkeypatch):
    """``kernel_ids`` runs in every benchmark process that writes a sidecar record: one parse per module, and the
    ids are each kernel's own ``implementation_id``, the kernels read from each task's ``TASK`` literal."""
    root = _declared(tmp_path)
    assert provenance_kernels.kernel_files(root) == {
        ("walk", "one"): "kernels/tasks/walk/fast.py",
        ("walk", "two"): "kernels/two/walk.py",
        ("run", "one"): "kernels/one/generic.py",
    }
    entries = list(provenance_kernels.kernel_files(root).values())
    beside = ["kernels/tasks/walk/__init__.py", "kernels/tasks/run/__init__.py", "kernels/tasks/walk/env.py"]
    expected = {
        f"{task}/{impl}": provenance_kernels.implementation_id(root, path, entries, beside=beside)
        for (task, impl), path in provenance_kernels.kernel_files(root).items()
    }
    parsed = []
    imports = provenance_kernels._imports
    monkeypatch.setattr(
        provenance_kernels, "_imports", lambda r, path, w: parsed.append(path) or imports(r, path, w)
    )
    assert provenance_kernels.kernel_ids(root) == expected
    assert sorted(parsed) == sorted(set(parsed))  # each module once
    assert len(set(expected.values())) == 3


def test_a_declared_tree_follows_its_table_and_its_tasks_meter_files_are_the_meters(tmp_path):
    """The subject's directories are the table's; each task's meter.py, the snapshot helpers and the table are
    the meter's, and an edit to them moves the meter's id, not the subject's nor a kernel's."""
    root = _declared(tmp_path)
    where = provenance.on_disk(root)
    assert where.dirs == ("kernels/",) and where.tasks_dir == "kernels/tasks"
    assert where.is_meter("kernels/tasks/walk/meter.py") and where.is_meter("kernels/synthetic.py")
    assert not where.is_meter("kernels/tasks/walk/sub/meter.py") and not where.is_meter("kernels/meter.py")
    assert where.is_subject("kernels/tasks/walk/fast.py") and not where.is_subject(
        "kernels/tasks/walk/meter.py"
    )
    before, kernels = provenance.ids_on_disk(root), provenance_kernels.kernel_ids(root)
    for path, text in [
        ("kernels/tasks/walk/meter.py", "ATOL = 1.0\n"),
        ("kernels/synthetic.py", "MARGIN = 0\n"),
        ("pyproject.toml", (root / "pyproject.toml").read_text().replace('"one"', '"two"')),
    ]:
        (root / path).write_text(text)
        after = provenance.ids_on_disk(root)
        assert after["meter"] != before["meter"] and after["subject"] == before["subject"], path
        assert provenance_kernels.kernel_ids(root) == kernels, path
        before = after
    # the same declaration in a fusegate.toml of its own, which wins: the same meter
    pyproject = (root / "pyproject.toml").read_text()
    (root / "fusegate.toml").write_text(provenance.on_disk(root).declaration.toml())
    (root / "pyproject.toml").write_text(pyproject.replace('baseline = "two"', 'baseline = "three"'))
    assert provenance.ids_on_disk(root) == before


def test_the_subject_directories_are_the_declared_ones(tmp_path):
    """A repository whose tasks live in ``src/team/``: that is the subject; ``kernels/`` is nothing of it."""
    (tmp_path / "src/team/tasks/walk").mkdir(parents=True)
    (tmp_path / "src/team/tasks/walk/__init__.py").write_text(
        'TASK = TaskSpec(implementations={"a": ".a:A"})\n'
    )
    (tmp_path / "src/team/tasks/walk/a.py").write_text("A = 1\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels/other.py").write_text("B = 1\n")
    table = TABLE.replace('"kernels.tasks"', '"team.tasks"\nsubject = ["src/"]')
    (tmp_path / "pyproject.toml").write_text(
        table.replace('tasks = "team.tasks"', 'tasks = "src.team.tasks"')
    )
    assert provenance_kernels.kernel_files(tmp_path) == {("walk", "a"): "src/team/tasks/walk/a.py"}
    before = provenance.ids_on_disk(tmp_path)
    (tmp_path / "kernels/other.py").write_text("B = 2\n")
    assert provenance.ids_on_disk(tmp_path) == before
    (tmp_path / "src/team/tasks/walk/a.py").write_text("A = 2\n")
    assert provenance.ids_on_disk(tmp_path)["subject"] != before["subject"]


def test_an_undeclared_tree_keeps_the_ids_its_runs_recorded(tmp_path):
    """A commit from before the declaration: ``kernels/`` is its subject and its reference's tolerance file its
    meter, as when its runs recorded their ids (a re-evaluation of stored results compares them)."""
    root = _tree(tmp_path)
    (root / "kernels/reference").mkdir()
    (root / "kernels/reference/tolerance.py").write_text("ATOL = 1e-5\n")
    assert provenance.on_disk(root) == provenance.UNDECLARED
    files = [
        "kernels/__init__.py",
        "kernels/one/__init__.py",
        "kernels/one/generic.py",
        "kernels/one/walk.py",
    ]
    files += ["kernels/shared.py", "kernels/two/walk.py"]
    blobs = {f: provenance.blob_id((root / f).read_bytes()) for f in [*files, "gate/meter/driver.py"]}
    blobs["kernels/reference/tolerance.py"] = provenance.blob_id(b"ATOL = 1e-5\n")
    pins = provenance.pins_id((root / "pyproject.toml").read_bytes())
    subject = provenance.content_id([*((f, blobs[f]) for f in files), ("pyproject.toml#dependencies", pins)])
    meter = provenance.content_id(
        [(f, blobs[f]) for f in ("gate/meter/driver.py", "kernels/reference/tolerance.py")]
    )
    assert provenance.ids_on_disk(root) == {"subject": subject, "meter": meter}


def test_a_declaration_that_cannot_be_read_is_a_meter_of_its_own(tmp_path):
    root = _declared(tmp_path)
    before = provenance.ids_on_disk(root)
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text().replace("version = 1", "version = 9")
    )
    broken = provenance.on_disk(root)
    assert broken.declaration is None and "version 9" in broken.table
    assert provenance.ids_on_disk(root)["meter"] != before["meter"]
    assert provenance_kernels.kernel_ids(root) == {}


def test_meter_changes_name_the_declaration_when_it_differs():
    base = provenance.layout(TABLE)
    head = provenance.layout(TABLE.replace('baseline = "one"', 'baseline = "two"'))
    changed = ["kernels/tasks/walk/meter.py", "kernels/tasks/walk/fast.py", "pyproject.toml", "README.md"]
    assert provenance.meter_changes(changed, base, base) == ("kernels/tasks/walk/meter.py",)
    assert provenance.meter_changes(changed, base, head) == ("kernels/tasks/walk/meter.py", provenance.TABLE)


def _changed(root: Path, path: str, text: str) -> set[str]:
    """The kernels whose ids change when ``path`` is made to hold ``text``."""
    before = _ids(root)
    (root / path).write_text(text)
    after = _ids(root)
    return {e for e in ENTRIES if after[e] != before[e]}


def test_a_module_only_some_kernels_import_is_theirs_alone(tmp_path):
    """A code generator of one family of kernels: an edit to it re-measures that family only, wherever it lives.
    A module no kernel imports (the registry), or that the registry imports by name (``beside``: a task's
    package and what it imports, its plan), runs beside every kernel: an edit to it reaches every id."""
    root = _tree(tmp_path)
    (root / "kernels/one/codegen.py").write_text("Y = 1\n")
    (root / "kernels/one/helpers.py").write_text("Z = 1\n")
    (root / "kernels/one/__init__.py").write_text("from kernels.one import helpers\n")
    (root / "kernels/codegen.py").write_text("V = 1\n")
    (root / "kernels/plan.py").write_text("W = 1\n")
    (root / "kernels/task.py").write_text("import kernels.plan\n")
    (root / "kernels/one/walk.py").write_text(
        "from kernels.shared import X\nfrom kernels.one import codegen\nimport kernels.plan, kernels.codegen\n"
    )

    def changed(path: str, text: str) -> set[str]:
        def ids() -> dict[str, str]:
            return {
                e: provenance_kernels.implementation_id(root, e, ENTRIES, beside=["kernels/task.py"])
                for e in ENTRIES
            }

        before = ids()
        (root / path).write_text(text)
        after = ids()
        return {e for e in ENTRIES if after[e] != before[e]}

    one = {"kernels/one/walk.py", "kernels/one/generic.py"}  # generic imports walk
    assert changed("kernels/one/codegen.py", "Y = 2\n") == one
    assert changed("kernels/codegen.py", "V = 2\n") == one  # outside the kernels' package too
    package = "from kernels.one import helpers  # the package above the generator\n"
    assert changed("kernels/one/__init__.py", package) == one
    assert changed("kernels/one/helpers.py", "Z = 2\n") == one  # what the package imports runs with it
    assert changed("kernels/registry.py", "from importlib import import_module\n") == set(ENTRIES)
    assert changed("kernels/plan.py", "W = 2\n") == set(ENTRIES)  # the task imports it, beside every kernel
    before = _ids(root)
    # a module that does not parse: only the kernels that reach it lose their own id
    (root / "kernels/one/codegen.py").write_text("Y = (\n")
    broken = _ids(root)
    assert broken["kernels/one/walk.py"] == provenance.ids_on_disk(root)["subject"]
    assert broken["kernels/two/walk.py"] == before["kernels/two/walk.py"]


def test_in_this_tree_the_code_generator_is_the_generated_kernels_alone(tmp_path):
    """The repository's own kernels: an edit to the code generator changes the generated kernels' ids only; an
    edit to a task's package (which the registry imports by name) or to the registry changes every id."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "kernels", tmp_path / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path / "pyproject.toml")
    before = provenance_kernels.kernel_ids(tmp_path)
    assert {k.split("/")[1] for k in before} >= {"handwritten", "assembled", "numpy"}
    (codegen,) = tmp_path.glob("kernels/**/codegen.py")
    with codegen.open("a") as f:
        f.write("\n# a comment\n")
    generated = provenance_kernels.kernel_ids(tmp_path)
    changed = {k for k in before if generated[k] != before[k]}
    assert changed and all("assembled" in k for k in changed)
    assert {k for k in before if k.endswith("/assembled")} <= changed
    task = sorted(provenance_kernels.tasks(tmp_path).values(), key=lambda t: t.package)[0].package
    for shared in (task, "kernels/registry.py"):
        with (tmp_path / shared).open("a") as f:
            f.write("\n# a comment\n")
        edited = provenance_kernels.kernel_ids(tmp_path)
        assert all(edited[k] != generated[k] for k in before), shared
        generated = edited


def test_no_subject_module_but_the_registry_imports_by_a_computed_name():
    """The ids see static imports, and what the registry imports by name (each task's package, its kernels and
    its collector env, all named in the task's ``TASK``): a module that imported another by a computed name
    would leave it out of the ids of the kernels it runs beside."""
    import ast

    root = Path(__file__).resolve().parents[2]
    where = provenance.on_disk(root)
    assert where.declaration is not None and provenance_kernels.tasks(root)
    dynamic = []
    for module in sorted(p for d in where.dirs for p in (root / d).rglob("*.py")):
        path = module.relative_to(root).as_posix()
        if not where.is_subject(path) or path == "kernels/registry.py":
            continue
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                if name in {"import_module", "__import__"}:
                    dynamic.append(f"{path}:{node.lineno}")
    assert dynamic == []
