"""One implementation's subject id: what its kernel is made of, so an edit to another kernel's module leaves it."""

from pathlib import Path

from gate import provenance

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
    return {e: provenance.implementation_id(root, e, ENTRIES) for e in ENTRIES}


def test_an_edit_reaches_the_ids_of_the_kernels_that_import_it_and_no_other(tmp_path):
    root = _tree(tmp_path)
    before = _ids(root)
    assert len(set(before.values())) == 3
    # no other kernel's module left out: the whole subject's id
    assert provenance.implementation_id(root, ENTRIES[0], []) == provenance.ids_on_disk(root)["subject"]

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
    broken = provenance.implementation_id(root, "kernels/one/walk.py", ENTRIES)
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


def test_every_kernel_id_of_a_tree_at_once_parses_each_module_once(tmp_path, monkeypatch):
    """``kernel_ids`` runs in every benchmark process that writes a sidecar record: one parse per module, and the
    ids are each kernel's own ``implementation_id``."""
    root = _tree(tmp_path)
    (root / "kernels/registry.py").write_text(
        "_IMPLEMENTATIONS: dict = {\n"
        '    "one": {"walk": "kernels.one.walk:W", "run": "kernels.one.generic:G"},\n'
        '    "two": {"walk": "kernels.two.walk:W"},\n'
        "}\n"
    )
    expected = {
        "walk/one": provenance.implementation_id(root, "kernels/one/walk.py", ENTRIES),
        "run/one": provenance.implementation_id(root, "kernels/one/generic.py", ENTRIES),
        "walk/two": provenance.implementation_id(root, "kernels/two/walk.py", ENTRIES),
    }
    parsed = []
    imports = provenance._imports
    monkeypatch.setattr(provenance, "_imports", lambda r, path: parsed.append(path) or imports(r, path))
    assert provenance.kernel_ids(root) == expected
    assert sorted(parsed) == sorted(set(parsed))  # each module once
    assert len(set(expected.values())) == 3


def _changed(root: Path, path: str, text: str) -> set[str]:
    """The kernels whose ids change when ``path`` is made to hold ``text``."""
    before = _ids(root)
    (root / path).write_text(text)
    after = _ids(root)
    return {e for e in ENTRIES if after[e] != before[e]}


def test_a_module_only_some_kernels_import_is_theirs_alone(tmp_path):
    """A code generator of one family of kernels, in its package: an edit to it re-measures that family only. A
    module no kernel imports (the registry) or outside the kernels' packages (a plan, which the registry may
    import by a computed name) runs beside every kernel: an edit to it reaches every id."""
    root = _tree(tmp_path)
    (root / "kernels/one/codegen.py").write_text("Y = 1\n")
    (root / "kernels/one/helpers.py").write_text("Z = 1\n")
    (root / "kernels/one/__init__.py").write_text("from kernels.one import helpers\n")
    (root / "kernels/plan.py").write_text("W = 1\n")
    (root / "kernels/one/walk.py").write_text(
        "from kernels.shared import X\nfrom kernels.one import codegen\nimport kernels.plan\n"
    )
    one = {"kernels/one/walk.py", "kernels/one/generic.py"}  # generic imports walk
    assert _changed(root, "kernels/one/codegen.py", "Y = 2\n") == one
    package = "from kernels.one import helpers  # the package above the generator\n"
    assert _changed(root, "kernels/one/__init__.py", package) == one
    assert _changed(root, "kernels/one/helpers.py", "Z = 2\n") == one  # what the package imports runs with it
    assert _changed(root, "kernels/registry.py", "from importlib import import_module\n") == set(ENTRIES)
    assert _changed(root, "kernels/plan.py", "W = 2\n") == set(ENTRIES)  # one kernel imports it by name
    before = _ids(root)
    # a module that does not parse: only the kernels that reach it lose their own id
    (root / "kernels/one/codegen.py").write_text("Y = (\n")
    broken = _ids(root)
    assert broken["kernels/one/walk.py"] == provenance.ids_on_disk(root)["subject"]
    assert broken["kernels/two/walk.py"] == before["kernels/two/walk.py"]


def test_in_this_tree_the_code_generator_is_the_generated_kernels_alone(tmp_path):
    """The repository's own kernels: an edit to the code generator changes the generated kernels' ids only; an
    edit to a task's plan (which the registry imports by name) or to the registry changes every id."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "kernels", tmp_path / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path / "pyproject.toml")
    before = provenance.kernel_ids(tmp_path)
    assert {k.split("/")[1] for k in before} >= {"handwritten", "assembled", "numpy"}
    with (tmp_path / "kernels/assembled/codegen.py").open("a") as f:
        f.write("\n# a comment\n")
    generated = provenance.kernel_ids(tmp_path)
    changed = {k for k in before if generated[k] != before[k]}
    assert changed and all("assembled" in k for k in changed)
    assert {k for k in before if k.endswith("/assembled")} <= changed
    for shared in ("kernels/tasks/g1_walk_plan.py", "kernels/registry.py"):
        with (tmp_path / shared).open("a") as f:
            f.write("\n# a comment\n")
        edited = provenance.kernel_ids(tmp_path)
        assert all(edited[k] != generated[k] for k in before), shared
        generated = edited


def test_no_kernel_package_module_imports_another_by_a_computed_name():
    """The ids see static imports only, and only modules inside a kernel package can belong to some kernels
    alone: a module there that imported a sibling by a computed name would leave it out of the kernel's id."""
    import ast

    root = Path(__file__).resolve().parents[2]
    families = {entry.rpartition("/")[0] for entry in provenance.kernel_files(root).values()}
    assert families >= {"kernels/handwritten", "kernels/assembled"}
    dynamic = []
    for family in sorted(families):
        for module in sorted((root / family).glob("*.py")):
            for node in ast.walk(ast.parse(module.read_text())):
                if isinstance(node, ast.Call):
                    name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                    if name in {"import_module", "__import__"}:
                        dynamic.append(f"{module.relative_to(root)}:{node.lineno}")
    assert dynamic == []
