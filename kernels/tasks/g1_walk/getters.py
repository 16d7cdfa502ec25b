"""The g1_walk getter: the snapshot's physical arrays and ``noise_u`` from the batch's live MuJoCo state, one fused
``prange`` loop over the envs (``kernels.sim.getters`` has the random stream it draws from).
"""

from __future__ import annotations

from numba import njit, prange

from kernels.sim.getters import GETTERS, next_key, noise_row


@njit(parallel=True, cache=True)
def walk_rows(
    seed,
    key_calls,
    qpos,
    qvel,
    sensordata,
    actuator_force,
    site_xpos,
    feet_sites,
    out_qpos,
    out_qvel,
    out_sd,
    out_af,
    out_feet,
    out_noise,
):
    key = next_key(seed, key_calls, GETTERS)
    for r in prange(qpos.shape[0]):
        for j in range(qpos.shape[1]):
            out_qpos[r, j] = qpos[r, j]
        for j in range(qvel.shape[1]):
            out_qvel[r, j] = qvel[r, j]
        for j in range(sensordata.shape[1]):
            out_sd[r, j] = sensordata[r, j]
        for j in range(actuator_force.shape[1]):
            out_af[r, j] = actuator_force[r, j]
        for f in range(feet_sites.shape[0]):
            for c in range(3):
                out_feet[r, f, c] = site_xpos[r, feet_sites[f], c]
        noise_row(key, r, out_noise)
