"""What every task's simulation shares: the MuJoCo batch backend, the env base (``env.TaskEnv``), the random streams
of the getters, resets and bookkeeping, the policy, the replay and the end-to-end collector (``Collector`` in
``kernels.sim.collector``). A task's own env pieces live in its package; the collector gets its env from the
registry."""
