"""The g1_walk assembler: a plan becomes the source of one fused ``prange`` kernel (implementation ``assembled``).

Each library term is a snippet of scalar code with the shared quantities it needs. The generator emits, per env,
only the shared blocks the plan's terms need (each once), the terms with their parameters, weights, column
offsets and noise coefficients as literals (a zero noise level emits no noise code at all), the observation
blocks written to every group that includes them, and the foot bookkeeping and phase advance that every plan
has. There is no runtime term switch, no weight array and no intermediate buffer: the source reads like the
hand-written kernel (``fusegate kernels show-source --task g1_walk``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.assembled import codegen
from kernels.assembled.codegen import Source, literal
from kernels.spec import TaskPlan
from kernels.tasks.g1_walk import constants as task

# Shared per-env quantities: name -> (blocks it needs, lines).
BLOCKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "contact": (
        (),
        (
            "c0 = sd[i, S_FOOT_FLOOR_L] > 0.0",
            "c1 = sd[i, S_FOOT_FLOOR_R] > 0.0",
            "c0f = 1.0 if c0 else 0.0",
            "c1f = 1.0 if c1 else 0.0",
        ),
    ),
    "feet": (
        ("contact",),
        (
            "air0 = air_time[i, 0]",
            "air1 = air_time[i, 1]",
            "first0 = air0 > 0.0 and (c0 or last_contact[i, 0] != 0)",
            "first1 = air1 > 0.0 and (c1 or last_contact[i, 1] != 0)",
            "air0 += DT",
            "air1 += DT",
            "z0 = feet_pos[i, 0, 2]",
            "z1 = feet_pos[i, 1, 2]",
            "peak0 = max(peak[i, 0], z0)",
            "peak1 = max(peak[i, 1], z1)",
        ),
    ),
    "cmd": ((), ("cx = commands[i, 0]", "cy = commands[i, 1]", "cz = commands[i, 2]")),
    "cmd_norm": (("cmd",), ("cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)",)),
    "linvel": (
        (),
        (
            "vx = sd[i, S_LOCAL_LINVEL_PELVIS]",
            "vy = sd[i, S_LOCAL_LINVEL_PELVIS + 1]",
            "vz = sd[i, S_LOCAL_LINVEL_PELVIS + 2]",
        ),
    ),
    "gyro": (
        (),
        ("gx = sd[i, S_GYRO_PELVIS]", "gy = sd[i, S_GYRO_PELVIS + 1]", "gz = sd[i, S_GYRO_PELVIS + 2]"),
    ),
    "gravity": (
        (),
        (
            "qw = sd[i, S_ORIENTATION_PELVIS]",
            "qx = sd[i, S_ORIENTATION_PELVIS + 1]",
            "qy = sd[i, S_ORIENTATION_PELVIS + 2]",
            "qz = sd[i, S_ORIENTATION_PELVIS + 3]",
            "grav_x = -2.0 * (qx * qz - qw * qy)",
            "grav_y = -2.0 * (qy * qz + qw * qx)",
            "grav_z = -(1.0 - 2.0 * (qx * qx + qy * qy))",
        ),
    ),
    "speed_xy": (
        (),
        (
            "speed_xy = math.sqrt(sd[i, S_GLOBAL_LINVEL_PELVIS] * sd[i, S_GLOBAL_LINVEL_PELVIS]"
            " + sd[i, S_GLOBAL_LINVEL_PELVIS + 1] * sd[i, S_GLOBAL_LINVEL_PELVIS + 1])",
        ),
    ),
    "phase": ((), ("ph0 = phase[i, 0]", "ph1 = phase[i, 1]")),
    "nan": ((), ("nan = has_nan(qpos[i]) or has_nan(qvel[i])",)),
    "hip": (
        (),
        (
            "d_hip0 = abs(qpos[i, QPOS_JOINTS + J_L_HIP_ROLL] - Q0[J_L_HIP_ROLL])",
            "d_hip1 = abs(qpos[i, QPOS_JOINTS + J_L_HIP_YAW] - Q0[J_L_HIP_YAW])",
            "d_hip2 = abs(qpos[i, QPOS_JOINTS + J_R_HIP_ROLL] - Q0[J_R_HIP_ROLL])",
            "d_hip3 = abs(qpos[i, QPOS_JOINTS + J_R_HIP_YAW] - Q0[J_R_HIP_YAW])",
        ),
    ),
    "knee": (
        (),
        (
            "knee = abs(qpos[i, QPOS_JOINTS + J_L_KNEE] - Q0[J_L_KNEE])"
            " + abs(qpos[i, QPOS_JOINTS + J_R_KNEE] - Q0[J_R_KNEE])",
        ),
    ),
}
JOINT_BLOCKS = ("nan", "hip", "knee")
# Sums over the 29 joints, computed in one loop when any term needs them: name -> loop-body increment.
JOINT_SUMS = {
    "sum_abs": "abs(qpos[i, QPOS_JOINTS + j] - Q0[j])",
    "sum_sq": "(qpos[i, QPOS_JOINTS + j] - Q0[j]) * (qpos[i, QPOS_JOINTS + j] - Q0[j])",
    "limits": "max(SOFT_LO[j] - qpos[i, QPOS_JOINTS + j], 0.0) + max(qpos[i, QPOS_JOINTS + j] - SOFT_HI[j], 0.0)",
    "sum_torque": "abs(actuator_force[i, j])",
    "sum_energy": "abs(qvel[i, QVEL_JOINTS + j]) * abs(actuator_force[i, j])",
    "sum_rate": "(actions[i, j] - last_actions[i, j]) * (actions[i, j] - last_actions[i, j])",
}


@dataclass(frozen=True)
class Snippet:
    """Scalar code for one term: ``needs`` shared blocks or joint sums; ``lines`` assign ``{out}``."""

    needs: tuple[str, ...]
    lines: tuple[str, ...]


REWARDS: dict[str, Snippet] = {
    "tracking_lin_vel": Snippet(
        ("cmd", "linvel"),
        ("{out} = math.exp(-((cx - vx) * (cx - vx) + (cy - vy) * (cy - vy)) * {inv_sigma})",),
    ),
    "tracking_ang_vel": Snippet(("cmd", "gyro"), ("{out} = math.exp(-(cz - gz) * (cz - gz) * {inv_sigma})",)),
    "ang_vel_xy": Snippet(
        (),
        (
            "{out} = sd[i, S_GLOBAL_ANGVEL_TORSO] * sd[i, S_GLOBAL_ANGVEL_TORSO]"
            " + sd[i, S_GLOBAL_ANGVEL_TORSO + 1] * sd[i, S_GLOBAL_ANGVEL_TORSO + 1]",
        ),
    ),
    "orientation": Snippet(
        (),
        (
            "{out} = (sd[i, S_UPVECTOR_TORSO] - {target_x}) ** 2 + (sd[i, S_UPVECTOR_TORSO + 1] - {target_y}) ** 2"
            " + (sd[i, S_UPVECTOR_TORSO + 2] - {target_z}) ** 2",
        ),
    ),
    "feet_slip": Snippet(("speed_xy", "contact"), ("{out} = speed_xy * (c0f + c1f)",)),
    "feet_air_time": Snippet(
        ("feet",),
        (
            "{out} = 0.0",
            "if first0:",
            "    {out} += min(air0 - {threshold_min}, {clip})",
            "if first1:",
            "    {out} += min(air1 - {threshold_min}, {clip})",
        ),
    ),
    "feet_phase": Snippet(
        ("feet", "phase", "speed_xy", "cmd_norm"),
        (
            "{out} = 0.0",
            "if speed_xy > {mask_speed} or abs(sd[i, S_GLOBAL_ANGVEL_PELVIS + 2]) > {mask_speed} or cmd_norm > {mask_command}:",
            "    {t}e0 = z0 - swing_height(ph0, {swing_height})",
            "    {t}e1 = z1 - swing_height(ph1, {swing_height})",
            "    {out} = math.exp(-({t}e0 * {t}e0 + {t}e1 * {t}e1) * {inv_sigma})",
        ),
    ),
    "termination": Snippet((), ("{out} = 1.0 if is_done else 0.0",)),
    "stand_still": Snippet(
        ("cmd_norm", "sum_abs"), ("{out} = sum_abs if cmd_norm < {command_threshold} else 0.0",)
    ),
    "collision": Snippet(
        (), ("{out} = 1.0 if (sd[i, S_HAND_THIGH_L] > 0.0 or sd[i, S_HAND_THIGH_R] > 0.0) else 0.0",)
    ),
    "contact_force": Snippet(
        (),
        (
            "{out} = max(abs(sd[i, S_FOOT_FORCE_Z_L]) - {max_force}, 0.0)"
            " + max(abs(sd[i, S_FOOT_FORCE_Z_R]) - {max_force}, 0.0)",
        ),
    ),
    "joint_deviation_hip": Snippet(
        ("cmd", "hip"),
        ("{out} = d_hip1 + d_hip3 if cy > {sidestep_vy} else d_hip0 + d_hip1 + d_hip2 + d_hip3",),
    ),
    "joint_deviation_knee": Snippet(("knee",), ("{out} = knee",)),
    "dof_pos_limits": Snippet(("limits",), ("{out} = limits",)),
    "pose": Snippet(("sum_sq",), ("{out} = sum_sq",)),
    "lin_vel_z": Snippet(
        (),
        (
            "{out} = sd[i, S_GLOBAL_LINVEL_PELVIS + 2] * sd[i, S_GLOBAL_LINVEL_PELVIS + 2]"
            " + sd[i, S_GLOBAL_LINVEL_TORSO + 2] * sd[i, S_GLOBAL_LINVEL_TORSO + 2]",
        ),
    ),
    "base_height": Snippet((), ("{out} = (qpos[i, QPOS_BASE_Z] - {target}) ** 2",)),
    "torques": Snippet(("sum_torque",), ("{out} = sum_torque",)),
    "action_rate": Snippet(("sum_rate",), ("{out} = sum_rate",)),
    "energy": Snippet(("sum_energy",), ("{out} = sum_energy",)),
    "alive": Snippet((), ("{out} = 1.0",)),
}
TERMINATIONS: dict[str, Snippet] = {
    "torso_upside_down": Snippet((), ("sd[i, S_UPVECTOR_TORSO + 2] < 0.0",)),
    "feet_contact": Snippet((), ("sd[i, S_FOOT_FOOT] > 0.0",)),
    "foot_shin_contact": Snippet((), ("sd[i, S_FOOT_SHIN_L] > 0.0 or sd[i, S_FOOT_SHIN_R] > 0.0",)),
    "nan_state": Snippet(("nan",), ("nan",)),
}


@dataclass(frozen=True)
class Block:
    """An observation block: ``values`` (one expression per column) or ``loop`` (29 columns, index ``j``)."""

    needs: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    loop: str = ""


OBSERVATIONS: dict[str, Block] = {
    "linvel": Block(("linvel",), ("vx", "vy", "vz")),
    "gyro": Block(("gyro",), ("gx", "gy", "gz")),
    "gravity": Block(("gravity",), ("grav_x", "grav_y", "grav_z")),
    "command": Block(("cmd",), ("cx", "cy", "cz")),
    "joint_pos": Block(loop="qpos[i, QPOS_JOINTS + j] - Q0[j]"),
    "joint_vel": Block(loop="qvel[i, QVEL_JOINTS + j]"),
    "last_act": Block(loop="last_actions[i, j]"),
    "phase": Block(("phase",), ("math.cos(ph0)", "math.cos(ph1)", "math.sin(ph0)", "math.sin(ph1)")),
    "accelerometer": Block(
        (), ("sd[i, S_ACCEL_PELVIS]", "sd[i, S_ACCEL_PELVIS + 1]", "sd[i, S_ACCEL_PELVIS + 2]")
    ),
    "global_angvel": Block(
        (),
        (
            "sd[i, S_GLOBAL_ANGVEL_PELVIS]",
            "sd[i, S_GLOBAL_ANGVEL_PELVIS + 1]",
            "sd[i, S_GLOBAL_ANGVEL_PELVIS + 2]",
        ),
    ),
    "base_height": Block((), ("qpos[i, QPOS_BASE_Z]",)),
    "actuator_force": Block(loop="actuator_force[i, j]"),
    "feet_contact": Block(("contact",), ("c0f", "c1f")),
    "feet_linvel": Block((), ("sd[i, S_FOOT_LINVEL]", *(f"sd[i, S_FOOT_LINVEL + {k}]" for k in range(1, 6)))),
    "feet_air_time": Block(("feet",), ("air0", "air1")),
}

ARGS = (
    "qpos",
    "qvel",
    "sd",
    "actuator_force",
    "feet_pos",
    "actions",
    "last_actions",
    "commands",
    "phase_dt",
    "noise_u",
    "phase",
    "air_time",
    "last_contact",
    "peak",
)
# The snapshot arrays in contract order; ARGS are the generated kernel's names for them, position by position.
SNAPSHOT = tuple(spec.name for spec in task.CONTRACT.snapshot)
assert len(SNAPSHOT) == len(ARGS)


def _params(p: object) -> dict[str, str]:
    values = {name: literal(v) for name, v in vars(p).items()}
    if "sigma" in vars(p):
        values["inv_sigma"] = literal(1.0 / p.sigma)
    return values


def _closure(needs: set[str]) -> set[str]:
    """``needs`` with the shared blocks they need in turn."""
    closed = set(needs)
    for name in reversed(BLOCKS):
        if name in closed:
            closed.update(BLOCKS[name][0])
    return closed


def _emit_blocks(src: Source, needs: set[str], names: tuple[str, ...]) -> None:
    """The blocks among ``names`` that ``needs`` asks for, in the fixed order of BLOCKS."""
    for name, (_, lines) in BLOCKS.items():
        if name in names and name in needs:
            src(*lines)


def _emit_joint_sums(src: Source, needs: set[str]) -> None:
    """One loop over the joints for every joint sum asked for."""
    sums = [n for n in JOINT_SUMS if n in needs]
    if sums:
        src(*(f"{n} = 0.0" for n in sums), "for j in range(NJ):").indent()
        src(*(f"{n} += {JOINT_SUMS[n]}" for n in sums)).dedent()


def generate(plan: TaskPlan) -> str:
    """The source of a module defining ``update_state_kernel`` for ``plan``."""
    src = Source()
    codegen.kernel(
        src, args=[*ARGS, *codegen.outputs(plan)], scratch=["scratch"], n_from="qpos", fastmath=True
    )
    # Shared quantities, each computed once; "feet" and "phase" carry the bookkeeping every plan has. The
    # per-joint work comes first and the 29-wide observation blocks are written right after it, while the
    # env's joint rows are hot (measured: emitting them after the rewards cost 3-8% at 131072 envs).
    needs = {"feet", "phase"}
    needs.update(*(TERMINATIONS[t.fn].needs for t in plan.terminations))
    needs.update(*(REWARDS[r.fn].needs for r in plan.rewards))
    needs.update(*(OBSERVATIONS[o.fn].needs for g in plan.observations for o in g.terms))
    needs = _closure(needs)
    _emit_blocks(src, needs, ("contact", "feet", *JOINT_BLOCKS))
    _emit_joint_sums(src, needs)
    _emit_observations(src, plan, loops=True)
    _emit_blocks(src, needs, tuple(name for name in BLOCKS if name not in ("contact", "feet", *JOINT_BLOCKS)))

    # Termination (spec A5) and the reward terms, with parameters and weights as literals.
    codegen.terminations(src, (TERMINATIONS[t.fn].lines[0] for t in plan.terminations))
    codegen.rewards(
        src,
        plan,
        lambda k, r: (
            line.format(out=f"f{k}", t=f"t{k}_", **_params(r.params)) for line in REWARDS[r.fn].lines
        ),
    )

    # Observations: each block computed once and written to its group and every group that includes it.
    _emit_observations(src, plan, loops=False)

    # Bookkeeping 5 and the phase advance.
    src(
        "air_time[i, 0] = 0.0 if c0 else air0",
        "air_time[i, 1] = 0.0 if c1 else air1",
        "last_contact[i, 0] = 1 if c0 else 0",
        "last_contact[i, 1] = 1 if c1 else 0",
        "peak[i, 0] = 0.0 if c0 else peak0",
        "peak[i, 1] = 0.0 if c1 else peak1",
        "phase[i, 0] = wrap_2pi(ph0 + phase_dt[i] + math.pi) - math.pi",
        "phase[i, 1] = wrap_2pi(ph1 + phase_dt[i] + math.pi) - math.pi",
    )
    codegen.end_kernel(src)
    return codegen.module(
        plan=plan,
        layout=task,
        helpers={"kernels.scalar": ("has_nan", "reduce_means", "swing_height", "wrap_2pi")},
        constants={
            "DT": literal(plan.dt),
            "NJ": str(task.NUM_JOINTS),
            "Q0": codegen.array(task.DEFAULT_POSE),
            "SOFT_LO": codegen.array(task.SOFT_LOWER),
            "SOFT_HI": codegen.array(task.SOFT_UPPER),
        },
        body=src,
    )


def _emit_observations(src: Source, plan: TaskPlan, *, loops: bool) -> None:
    """The observation blocks written in a loop over joints (``loops``) or the scalar ones."""
    for group in plan.observations:
        dests = [f"out_{g}" for g in codegen.destinations(plan, group.name)]
        start = plan.width(group.include) if group.include else 0
        column = start
        for term in group.terms:
            block = OBSERVATIONS[term.fn]
            if bool(block.loop) != loops:
                column += task.NUM_JOINTS if block.loop else len(block.values)
                continue
            noise = ""
            if term.noise and plan.noise_level:
                scale = plan.noise_level * term.noise
                noise_col = plan.definition(term).noise_column
                noise = f" + ({literal(2.0 * scale)} * noise_u[i, {noise_col} + {{k}}] - {literal(scale)})"
            src(f"# {group.name}.{term.name}")
            if block.loop:
                src(f"for j in range({task.NUM_JOINTS}):").indent()
                src(f"v = {block.loop}{noise.format(k='j')}")
                src(*(f"{d}[i, {column} + j] = v" for d in dests)).dedent()
                column += task.NUM_JOINTS
                continue
            for k, value in enumerate(block.values):
                if len(dests) == 1:
                    src(f"{dests[0]}[i, {column + k}] = {value}{noise.format(k=k)}")
                else:
                    src(f"v = {value}{noise.format(k=k)}", *(f"{d}[i, {column + k}] = v" for d in dests))
            column += len(block.values)


class AssembledWalk(codegen.AssembledKernel):
    task_module = task
    snapshot = SNAPSHOT
    generate = staticmethod(generate)
