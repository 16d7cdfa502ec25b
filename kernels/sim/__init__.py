"""The MuJoCo G1 batch backend and the end-to-end collector (``Collector`` in ``kernels.sim.collector``)."""
