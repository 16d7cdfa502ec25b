"""No bare layout integers in kernel bodies: packed arrays are addressed through the tasks' named offsets.

A column of a packed array (sensordata, qpos, qvel, noise_u, the observation rows, the generic kernels'
workspace) is a name, or a name plus an offset inside its block (``S_GYRO_PELVIS + 2``, ``OBS_JOINT_POS + j``);
a bare integer (``sd[i, 68]``, ``o[99]``, ``u[38 + j]``) fails, naming the line. Generated sources are checked
for the task's input arrays; their output and noise columns come from the plan, as literals.
"""

from __future__ import annotations

import ast
import inspect
from importlib import import_module

import pytest

from kernels import registry

# Module -> the names its kernels give packed arrays (the column is the last index).
MODULES = {
    "kernels.tasks.g1_walk.handwritten": {"sd", "qpos", "qvel", "u", "o", "p", "noise_u", "obs", "priv"},
    "kernels.tasks.g1_motion.handwritten": {"u", "o", "c", "noise_u", "obs", "critic"},
    "kernels.tasks.g1_walk.generic": {"sd", "qpos", "qvel", "dq", "ws", "noise_u"},
    "kernels.tasks.g1_motion.generic": {"ws", "noise_u"},
}
GENERATED = {"g1_walk": {"sd", "qpos", "qvel"}, "g1_motion": {"rel_pos", "body_pos", "body_quat"}}


def _named(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id.isupper() for n in ast.walk(node))


def _bare_integers(index: ast.AST) -> list[int]:
    """Integer literals of ``index`` that are not an offset added to a named constant."""
    allowed = set()
    for node in ast.walk(index):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(side, ast.Constant) and _named(other):
                    allowed.add(id(side))
    return [
        n.value
        for n in ast.walk(index)
        if isinstance(n, ast.Constant) and type(n.value) is int and id(n) not in allowed
    ]


def violations(source: str, arrays: set[str], *, columns_only: bool = True) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in arrays:
            index = node.slice
            if isinstance(index, ast.Tuple):
                index = index.elts[-1] if columns_only else index
            if _bare_integers(index):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", MODULES)
def test_kernels_address_packed_arrays_by_name(module):
    source = inspect.getsource(import_module(module))
    assert not violations(source, MODULES[module]), violations(source, MODULES[module])


@pytest.mark.parametrize("task", registry.TASKS)
def test_generated_kernels_read_inputs_by_name(task):
    generator = registry.kernel_class(task, "assembled")
    source = generator.generate(registry.default_plan(task))
    body = source.split("def update_state_kernel", 1)[1]
    bodies = [n for n in GENERATED[task] if n in body]
    assert bodies, "the check found none of the arrays it looks for"
    # Bodies of g1_motion are (N, 14, k): the body index (second) must be a name; components are not layout.
    columns_only = task == "g1_walk"
    if not columns_only:
        tree = ast.parse(source)
        found = [
            ast.unparse(n)
            for n in ast.walk(tree)
            if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id in GENERATED[task]
            and isinstance(n.slice, ast.Tuple)
            and _bare_integers(n.slice.elts[1])
        ]
        assert not found, found
    else:
        assert not violations(source, GENERATED[task]), violations(source, GENERATED[task])


def test_the_check_catches_bare_offsets():
    assert violations("sd[i, 68]\no[99]\nu[38 + j]\n", {"sd", "o", "u"}) == [
        "line 1: sd[i, 68]",
        "line 2: o[99]",
        "line 3: u[38 + j]",
    ]
    assert not violations("sd[i, S_GYRO + 2]\no[OBS_PHASE + 3]\nu[U_JOINT_POS + j]\n", {"sd", "o", "u"})
