"""The NumPy references wrapped as kernels (implementation ``numpy``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kernels.kernel import Kernel
from kernels.reference import g1_motion, g1_walk
from kernels.tasks import g1_motion as motion_task
from kernels.tasks import g1_walk as walk_task


class ReferenceWalk(Kernel):
    impl = "numpy"

    def __init__(self, **kwargs):
        super().__init__(walk_task.CONTRACT, **kwargs)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        g1_walk.update_state(snap, out, self.plan)


class ReferenceMotion(Kernel):
    impl = "numpy"

    def __init__(self, **kwargs):
        super().__init__(motion_task.CONTRACT, **kwargs)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        g1_motion.update_state(snap, out, self.plan)
