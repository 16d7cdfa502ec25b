"""This repository's tasks, one package each (``kernels.registry``): ``g1_walk`` and ``g1_motion``."""
