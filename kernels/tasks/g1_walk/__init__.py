"""g1_walk: MuJoCo Playground's G1 joystick walk on flat terrain (spec A, E2).

``constants`` (the array contract, layout and reward scales), ``plan`` (the term library and the default plan),
``reference`` (the NumPy semantics), ``handwritten``, ``assembled`` and ``generic`` (the fused kernels), the
collector env (``env``, ``model``, ``getters``, ``resets``, ``bookkeeping``) and ``meter`` (the meter's part:
snapshots, tolerances, cost weights).
"""

from kernels.spec import TaskSpec
from kernels.tasks.g1_walk.constants import CONTRACT
from kernels.tasks.g1_walk.plan import DEFAULT_PLAN

TASK = TaskSpec(
    contract=CONTRACT,
    plan=DEFAULT_PLAN,
    implementations={
        "numpy": ".reference:ReferenceWalk",
        "handwritten": ".handwritten:HandwrittenWalk",
        "assembled": ".assembled:AssembledWalk",
        "assembled_generic": ".generic:GenericWalk",
    },
    reference="numpy",
    env=".env:WalkEnv",
)
