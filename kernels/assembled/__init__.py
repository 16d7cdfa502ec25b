"""Kernels assembled from a task's term plan: generated source (``assembled``) and one generic runtime
kernel for any plan (``assembled_generic``)."""
