"""The gate's words are enums from the store to the wire (``gate.domain.vocabulary``): a status word spelled as a
string literal in the gate is a second declaration of it."""

import ast
from pathlib import Path

import pytest

from gate.domain.vocabulary import Decision, Kind, Signal, Status, Verdict

ROOT = Path(__file__).resolve().parents[3]
WORDS = frozenset(Status)


def _enum_bodies(tree: ast.Module) -> set[int]:
    """The ids of the value nodes of every StrEnum's members: an enum's values are its one declaration."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name | ast.Attribute) and ast.unparse(b).endswith("StrEnum") for b in node.bases
        ):
            inside |= {id(n) for item in node.body for n in ast.walk(item)}
    return inside


def _names(tree: ast.Module) -> set[int]:
    """The ids of string constants that name a field rather than state a status: dict keys and subscripts
    (``{"ok": a.ok}``, ``row["ok"]``)."""
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {id(k) for k in node.keys if k is not None}
        elif isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
    return keys


def status_literals(source: str) -> list[tuple[int, str]]:
    """(line, word) of every status word spelled as a string literal, outside an enum's definition and field
    names."""
    tree = ast.parse(source)
    allowed = _enum_bodies(tree) | _names(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in WORDS and id(node) not in allowed
    ]


def test_the_status_words_are_spelled_once():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {word!r} (use gate.domain.vocabulary.Status.{Status(word).name})"
        for path in sorted((ROOT / "gate").rglob("*.py"))
        for line, word in status_literals(path.read_text())
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('if c.status == "ok": pass', [(1, "ok")]),
        ('r = Result(status="failed" if v is None else "ok")', [(1, "failed"), (1, "ok")]),
        ('s.status, s.message = "insufficient", str(e)', [(1, "insufficient")]),
        ('x = (c.task, c.status) == (task, "ok")', [(1, "ok")]),
        ('answers = [{"command": a.command, "ok": a.ok}]', []),  # a field's name, not a status
        ('done = all(r["ok"] for r in rows)', []),
        ('class Status(StrEnum):\n    OK = "ok"', []),  # the declaration itself
        ('class Other:\n    OK = "ok"', [(2, "ok")]),
        ('"""ok"""', [(1, "ok")]),
        ('print("ok then")', []),
    ],
)
def test_the_scan_finds_status_words_where_they_state_a_status(source, found):
    assert status_literals(source) == found


def test_status_values_are_the_stored_strings():
    """Stored rows and sent JSON hold these strings: changing one needs a migration."""
    assert [s.value for s in Status] == ["ok", "failed", "insufficient"]
    assert Status("ok") is Status.OK and Status.OK == "ok" and f"{Status.FAILED}" == "failed"


def test_openapi_lists_the_enums(store_url, tmp_path):
    from gate.api.app import create_app

    schemas = create_app(database_url=store_url, repo=tmp_path).openapi()["components"]["schemas"]
    for enum in (Kind, Decision, Signal, Verdict):
        assert schemas[enum.__name__]["enum"] == [e.value for e in enum], enum.__name__
