"""The g1_motion getter: the tracked bodies' poses and velocities at the body origin (spec B2), the joints and
``noise_u`` from the batch's live MuJoCo state, one fused ``prange`` loop over the envs (``kernels.sim.getters``
has the random stream it draws from).

Body velocities are taken at the body origin, as mjlab does: ``v = cvel_lin - w x (subtree_com[root] - xpos)``,
which equals ``mj_objectVelocity(mjOBJ_XBODY, world)``.
"""

from __future__ import annotations

from numba import njit, prange

from kernels.sim.getters import GETTERS, next_key, noise_row


@njit(parallel=True, cache=True)
def motion_rows(
    seed,
    key_calls,
    xpos,
    xquat,
    cvel,
    subtree_com,
    bodies,
    roots,
    qpos,
    qvel,
    out_pos,
    out_quat,
    out_lin,
    out_ang,
    out_jpos,
    out_jvel,
    out_noise,
):
    key = next_key(seed, key_calls, GETTERS)
    for r in prange(qpos.shape[0]):
        for k in range(bodies.shape[0]):
            b = bodies[k]
            root = roots[k]
            wx, wy, wz = cvel[r, b, 0], cvel[r, b, 1], cvel[r, b, 2]
            dx = subtree_com[r, root, 0] - xpos[r, b, 0]
            dy = subtree_com[r, root, 1] - xpos[r, b, 1]
            dz = subtree_com[r, root, 2] - xpos[r, b, 2]
            out_lin[r, k, 0] = cvel[r, b, 3] - (wy * dz - wz * dy)
            out_lin[r, k, 1] = cvel[r, b, 4] - (wz * dx - wx * dz)
            out_lin[r, k, 2] = cvel[r, b, 5] - (wx * dy - wy * dx)
            out_ang[r, k, 0] = wx
            out_ang[r, k, 1] = wy
            out_ang[r, k, 2] = wz
            for c in range(3):
                out_pos[r, k, c] = xpos[r, b, c]
            for c in range(4):
                out_quat[r, k, c] = xquat[r, b, c]
        for j in range(out_jpos.shape[1]):
            out_jpos[r, j] = qpos[r, 7 + j]
            out_jvel[r, j] = qvel[r, 6 + j]
        noise_row(key, r, out_noise)
