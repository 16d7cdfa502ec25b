"""g1_motion: BeyondMimic-style motion tracking with mjlab's G1 settings (spec B, E3).

``constants`` (the array contract, layout and reward scales), ``plan`` (the term library and the default plan),
``reference`` (the NumPy semantics), ``handwritten``, ``assembled`` and ``generic`` (the fused kernels), the
collector env (``env``, ``model``, ``clip``, ``getters``, ``resets``, ``bookkeeping``) and ``meter`` (the
meter's part: snapshots, tolerances, cost weights).
"""

from kernels.spec import TaskSpec
from kernels.tasks.g1_motion.constants import CONTRACT
from kernels.tasks.g1_motion.plan import DEFAULT_PLAN

TASK = TaskSpec(
    contract=CONTRACT,
    plan=DEFAULT_PLAN,
    implementations={
        "numpy": ".reference:ReferenceMotion",
        "handwritten": ".handwritten:HandwrittenMotion",
        "assembled": ".assembled:AssembledMotion",
        "assembled_generic": ".generic:GenericMotion",
    },
    reference="numpy",
    env=".env:MotionEnv",
)
