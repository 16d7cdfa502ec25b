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
