"""The README's quick start stays true: two commands, and CI runs the test one verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines() if line.strip() and not line.startswith("#")]


def test_quick_start_is_two_commands():
    commands = quick_start()
    assert len(commands) == 2, commands
    assert "fusegate run" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert quick_start()[1] in ci_lines
