"""``python -m tools``: every command parses as ``fusegate``'s do, and every tool the docs name exists."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib import util
from pathlib import Path

import pytest

from gate.cli import exits
from tools import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "tools" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_exits_64_on_a_bad_option_and_prints_its_own_usage(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--no-such-option"])
    assert exc.value.code == exits.USAGE
    err = capsys.readouterr().err
    assert f"usage: python -m tools {command}" in err
    assert "--no-such-option" in err or "are required" in err


def test_python_m_tools_lists_the_commands_and_the_modules():
    done = subprocess.run(
        [sys.executable, "-m", "tools", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert all(name in done.stdout for name in _commands())
    assert all(f"python -m tools.{m}" in " ".join(done.stdout.split()) for m in cli.MODULES)
    assert all(util.find_spec(f"tools.{m}") is not None for m in cli.MODULES)


def _named(text: str, *, table: bool = False) -> list[list[str]]:
    """The words after ``python -m`` of every ``python -m tools...`` a doc names (code spans, sh lines), and of
    the command table in tools/README.md."""
    found = []
    for span in re.findall(r"`(python -m tools[^`]*)`|^(python -m tools.*)$", text, re.M):
        found.append((span[0] or span[1]).split("  #")[0].split()[2:])
    if table:
        rows = re.findall(r"^\| `([a-z][^`]*)` \|", text, re.M)
        found += [
            [f"tools.{row}"] if "_" in row or row in cli.MODULES else ["tools", *row.split()] for row in rows
        ]
    return found


def test_every_tool_and_option_the_docs_name_exists():
    commands = _commands()
    unknown = []
    for doc in DOCS:
        name = str(doc.relative_to(ROOT))
        for words in _named(doc.read_text(), table=name == "tools/README.md"):
            if words[0] != "tools":
                module = words[0].removeprefix("tools.")
                if module not in cli.MODULES and not module.isupper():  # MODULE: a placeholder
                    unknown.append((name, words[0]))
                continue
            if len(words) < 2 or not re.fullmatch(r"[a-z-]+", words[1]):
                continue  # ``python -m tools`` alone, or with COMMAND
            if words[1] not in commands:
                unknown.append((name, words[1]))
                continue
            known = {o for a in commands[words[1]]._actions for o in a.option_strings}
            options = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(words[2:]))
            unknown += [(name, f"{words[1]} {o}") for o in options if o not in known]
    assert unknown == []
