"""docs/settings.md names every FUSEGATE_* variable the code reads and every policy key, and nothing else."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from gate.meter.profile import Profile
from gate.policy import Policy
from gate.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bFUSEGATE_[A-Z0-9_]*[A-Z0-9]\b")


def _table_names(section: str) -> set[str]:
    text = (ROOT / "docs" / "settings.md").read_text()
    part = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", part, re.M)}


def test_every_variable_the_code_reads_is_in_the_table_and_nothing_else():
    used = set()
    for package in ("gate", "kernels", "benchmarks"):
        for path in (ROOT / package).rglob("*.py"):
            used |= set(NAME.findall(path.read_text()))
    used |= {f"FUSEGATE_{name.upper()}" for name in Settings.model_fields}
    used |= set(Profile.variables())
    text = (ROOT / "docs" / "settings.md").read_text()
    documented = {m.group(1) for m in re.finditer(r"^\| `(FUSEGATE_[A-Z0-9_]+)` \|", text, re.M)}
    assert used - documented == set(), "read but not in docs/settings.md"
    assert documented - used == set(), "in docs/settings.md but read nowhere"


def test_every_policy_key_is_in_the_table():
    keys = {f.name for f in dataclasses.fields(Policy)}
    assert _table_names("The policy") == keys
