"""The declared subject (``gate.subject``): the ``[tool.fusegate]`` table or a ``fusegate.toml``, read or refused."""

from pathlib import Path

import pytest

from gate import subject
from gate.subject import Grid, SubjectError

TABLE = """[tool.fusegate]
version = 1
tasks = "team.tasks"
baseline = "fast"
[tool.fusegate.grid]
quick = { scales = [64, 256], paired = ["faster"] }
full = { scales = [64, 256, 1024] }
"""


def test_this_repository_declares_its_tasks_baseline_and_grid():
    found = subject.read(Path(__file__).resolve().parents[2])
    assert (found.tasks, found.dirs, found.baseline) == ("kernels.tasks", ("kernels/",), "handwritten")
    assert found.profile("quick") == Grid(scales=(4096, 32768), paired=("assembled",))
    assert found.profile("full").scales == tuple(2**k for k in range(11, 19))
    assert found.tasks_dir == "kernels/tasks"


def test_the_subject_defaults_to_the_tasks_top_level_package_and_paired_to_none():
    found = subject.from_texts(TABLE, None)
    assert found.dirs == ("team/",) and found.profile("full") == Grid(scales=(64, 256, 1024), paired=())
    assert "pyproject.toml [tool.fusegate]" in found.source


def test_a_fusegate_toml_wins_and_round_trips(tmp_path):
    found = subject.from_texts(TABLE, None)
    (tmp_path / "pyproject.toml").write_text(TABLE.replace('"fast"', '"other"'))
    (tmp_path / "fusegate.toml").write_text(found.toml())
    read = subject.read(tmp_path)
    assert read.table() == found.table() and read.source.startswith("fusegate.toml")


@pytest.mark.parametrize(
    ("pyproject", "toml", "said"),
    [
        (None, None, "neither fusegate.toml nor pyproject.toml"),
        ('[project]\nname = "x"\n', None, "has no [tool.fusegate] table"),
        ("[tool.fusegate\n", None, "not valid TOML"),
        (TABLE.replace("version = 1", "version = 1\ncolour = 1"), None, "unknown key(s) colour"),
        (TABLE.replace("version = 1", "version = 2"), None, "version 2 is not supported"),
        (TABLE.replace('tasks = "team.tasks"\n', ""), None, "tasks is missing"),
        (TABLE.replace('"team.tasks"', '"team/tasks"'), None, "dotted package name"),
        (TABLE.replace('"team.tasks"', '"team.tasks"\nsubject = ["../up/"]'), None, "inside the repository"),
        (TABLE.replace('"team.tasks"', '"team.tasks"\nsubject = ["other/"]'), None, "outside the subject"),
        (TABLE.replace('"team.tasks"', '"team.tasks"\nsubject = "team/"'), None, "non-empty list"),
        (TABLE.replace('baseline = "fast"', "baseline = 3"), None, "baseline must be"),
        (TABLE.replace("full = ", "slow = "), None, "unknown profile(s) slow"),
        (TABLE.replace("full = { scales = [64, 256, 1024] }\n", ""), None, "grid.full is missing"),
        (TABLE.replace("[64, 256, 1024]", "[64, 0]"), None, "grid.full.scales must be"),
        (TABLE.replace("[64, 256, 1024]", "[64, 64]"), None, "distinct"),
        (TABLE.replace('paired = ["faster"]', 'paired = "faster"'), None, "grid.quick.paired must be"),
        (TABLE.replace('paired = ["faster"]', "rounds = 2"), None, "unknown key(s) rounds"),
        (None, "version = 1\ntasks = 3\n", "fusegate.toml"),
    ],
)
def test_a_declaration_that_cannot_be_used_says_what_and_where(pyproject, toml, said):
    with pytest.raises(SubjectError) as info:
        subject.from_texts(pyproject, toml, where="/repo")
    assert said in str(info.value) and "/repo" in str(info.value)


def test_an_absent_declaration_shows_one_to_copy():
    with pytest.raises(SubjectError) as info:
        subject.from_texts('[project]\nname = "x"\n', None)
    example = str(info.value).split("e.g.\n", 1)[1]
    assert subject.from_texts(example, None).tasks == "kernels.tasks"


def test_a_tree_that_declares_nothing_is_read_as_this_repository_before_its_declaration():
    """One undeclared subject, read by the meter's ids and the policy's defaults alike."""
    assert not subject.declares(None, None) and not subject.declares('[project]\nname = "x"\n', None)
    assert subject.of_texts("[tool.ruff]\nline-length = 1\n", None) is subject.UNDECLARED
    assert subject.declares(TABLE, None) and subject.declares(None, "version = 1\n")
    assert subject.declares("not toml [tool.fusegate", None)  # unreadable text that names the table: declared
    assert subject.of_texts(TABLE, None) == subject.from_texts(TABLE, None)
    with pytest.raises(SubjectError, match="tasks is missing"):
        subject.of_texts("[tool.fusegate]\nversion = 1\n", None)
    legacy = subject.UNDECLARED
    assert (legacy.dirs, legacy.baseline, legacy.profile("quick").paired) == (
        ("kernels/",),
        "handwritten",
        ("assembled",),
    )
