"""The g1_motion assembler: a plan becomes the source of one fused ``prange`` kernel (implementation ``assembled``).

The generated kernel has the shape of the hand-written one (``kernels.tasks.g1_motion.handwritten``): per env it gathers
the anchors of frames t and t' = min(t + 1, T - 1), evaluates the plan's terminations and anchor terms, then does
the 14 bodies in three loops: a gather loop takes the body position and velocity errors and fills the per-thread
lanes (``kernels.scalar.LANES``) of a generated ``body_lanes`` pass, which LLVM vectorises: the orientation
errors, the p̃/q̃ update that every plan has because it is state, and the critic's body blocks when the plan asks
for them; a store loop writes them out. One pass over the 29 joints does the joint sums and per-joint observation
blocks. Each shared quantity is emitted once and only when a term of the plan needs it. Weights, kernel widths,
thresholds, column offsets and noise coefficients are literals (a zero noise level emits no noise code at all);
there is no runtime term switch, weight array or workspace of intermediate results. Print it with
``print(kernels.load("g1_motion", "assembled", num_envs=1, plan=plan).source)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.assembled import codegen
from kernels.assembled.codegen import Source, literal
from kernels.kernel import max_threads, padded_scratch
from kernels.scalar import LANES
from kernels.spec import TaskPlan
from kernels.tasks.g1_motion import constants as task

NB, NJ = task.NUM_BODIES, task.NUM_JOINTS
assert NB <= LANES  # the lane pass covers every body

# Shared per-env quantities: name -> (blocks it needs, lines). The robot anchor (pa, qa), frame t' (t1, pm1,
# qm1) and the yaw alignment are not here: every plan has them, for the p̃/q̃ update.
BLOCKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "frame_t": ((), ("pm = vec3_at(motion_pos, t, A)", "qm = quat_at(motion_quat, t, A)")),
    "ra": ((), ("ra = quat_to_mat(qa)",)),
    "qa_inv": ((), ("qa_inv = quat_conj(qa)",)),
    "anchor_err": (("frame_t",), ("anchor_err = sub3(pm, pa)",)),
    "anchor_angle": (("frame_t",), ("anchor_angle = quat_diff_angle(qm, qa)",)),
    "root": ((), ("q_root = quat_at(body_quat, i, ROOT)",)),
}
# The bodies: a gather loop takes the BODY_SUMS and fills the lanes (kernels.scalar.LANES) of the vectorised
# per-body pass, which computes the terms of the LANE_SUMS, the p̃/q̃ update every plan has and the body blocks.
# Per-body locals: name -> (width, line); the lane pass reads those it needs from its lanes.
BODY_LOCALS = {
    "pr": (3, "pr = vec3_at(body_pos, i, b)"),
    "qr": (4, "qr = quat_at(body_quat, i, b)"),
    "rq": (4, "rq = quat_at(rel_quat, i, b)"),
}
# Sums the gather loop takes: name -> (locals, lines).
BODY_SUMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pos_err": (("pr",), ("pos_err += sq_norm3(sub3(vec3_at(rel_pos, i, b), pr))",)),
    "lin_err": (
        (),
        ("lin_err += sq_norm3(sub3(vec3_at(motion_lin_vel, t, b), vec3_at(body_lin_vel, i, b)))",),
    ),
    "ang_err": (
        (),
        ("ang_err += sq_norm3(sub3(vec3_at(motion_ang_vel, t, b), vec3_at(body_ang_vel, i, b)))",),
    ),
}
# Sums whose per-body term the lane pass computes (the angle's atan2 is the costliest per-body operation):
# name -> (locals, lines assigning ``term``).
LANE_SUMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ori_err": (("qr", "rq"), ("angle = quat_diff_angle_branchless(rq, qr)", "term = angle * angle")),
}
# Per-joint locals and sums over the 29 joints (one loop, which also writes the joint blocks).
JOINT_LOCALS = {"q": "q = float(joint_pos[i, j])", "a": "a = float(actions[i, j])"}
JOINT_SUMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "rate": (("a",), ("da = a - last_actions[i, j]", "rate += da * da")),
    "limit": (("q",), ("limit += max(SOFT_LO[j] - q, 0.0) + max(q - SOFT_HI[j], 0.0)",)),
}


@dataclass(frozen=True)
class Snippet:
    """Scalar code for one term: ``needs`` shared blocks or sums; ``lines`` assign ``{out}`` (rewards) or are
    one condition (terminations)."""

    needs: tuple[str, ...]
    lines: tuple[str, ...]


def _exp(error: str, needs: str) -> Snippet:
    return Snippet((needs,), (f"{{out}} = math.exp(-{error} * {{inv_var}})",))


REWARDS: dict[str, Snippet] = {
    "motion_global_anchor_pos": _exp("sq_norm3(anchor_err)", "anchor_err"),
    "motion_global_anchor_ori": _exp("anchor_angle * anchor_angle", "anchor_angle"),
    "motion_body_pos": _exp("pos_err", "pos_err"),
    "motion_body_ori": _exp("ori_err", "ori_err"),
    "motion_body_lin_vel": _exp("lin_err", "lin_err"),
    "motion_body_ang_vel": _exp("ang_err", "ang_err"),
    "action_rate_l2": Snippet(("rate",), ("{out} = rate",)),
    "joint_limit": Snippet(("limit",), ("{out} = limit",)),
}
# The body means are over NB bodies: their 1 / (NB std^2) is one literal.
MEAN_OVER_BODIES = {"motion_body_pos", "motion_body_ori", "motion_body_lin_vel", "motion_body_ang_vel"}
_EE_GAPS = " or ".join(
    f"abs(float(rel_pos[i, {b}, 2]) - float(body_pos[i, {b}, 2])) > {{threshold}}"
    for b in ("B_LEFT_ANKLE", "B_RIGHT_ANKLE", "B_LEFT_WRIST", "B_RIGHT_WRIST")
)
assert tuple(
    getattr(task, b) for b in ("B_LEFT_ANKLE", "B_RIGHT_ANKLE", "B_LEFT_WRIST", "B_RIGHT_WRIST")
) == (task.END_EFFECTORS)
TERMINATIONS: dict[str, Snippet] = {
    "anchor_pos": Snippet(("anchor_err",), ("abs(anchor_err[2]) > {threshold}",)),
    # (R(q)ᵀ g)_z = −R22, so the gravity gap is the gap of R22.
    "anchor_ori": Snippet(("frame_t", "ra"), ("abs(quat_to_mat(qm)[R22] - ra[R22]) > {threshold}",)),
    "ee_body_pos": Snippet((), (_EE_GAPS,)),
}


@dataclass(frozen=True)
class Block:
    """An observation block. ``scope`` "env": ``value`` is a tuple computed once per env into ``name``, columns
    k. "body": a tuple per body, columns ``width`` * b + k. "joint": ``values`` are (column offset, local, line)
    per joint, columns offset + j."""

    scope: str
    needs: tuple[str, ...] = ()
    name: str = ""
    value: str = ""
    width: int = 0
    width_name: str = ""  # the task's name for a body block's per-body width
    values: tuple[tuple[int, str, str], ...] = ()


OBSERVATIONS: dict[str, Block] = {
    "command": Block(
        "joint",
        values=(
            (0, "q_ref", "q_ref = float(motion_joint_pos[t1, j])"),
            (NJ, "qd_ref", "qd_ref = float(motion_joint_vel[t1, j])"),
        ),
    ),
    "motion_anchor_pos_b": Block("env", ("ra",), "anchor_pos_b", "mat_t_vec(ra, sub3(pm1, pa))", 3),
    "motion_anchor_ori_b": Block("env", ("qa_inv",), "anchor_ori_b", "quat_to_6d(quat_mul(qa_inv, qm1))", 6),
    "body_pos": Block(
        "body", ("ra", "pr"), "body_pos_b", "mat_t_vec(ra, sub3(pr, pa))", task.BODY_POS_DIM, "BODY_POS_DIM"
    ),
    "body_ori": Block(
        "body",
        ("qa_inv", "qr"),
        "body_ori_b",
        "quat_to_6d(quat_mul(qa_inv, qr))",
        task.BODY_ORI_DIM,
        "BODY_ORI_DIM",
    ),
    "base_lin_vel": Block(
        "env", ("root",), "lin_vel_b", "quat_rotate_inv(q_root, vec3_at(body_lin_vel, i, ROOT))", 3
    ),
    "base_ang_vel": Block(
        "env", ("root",), "ang_vel_b", "quat_rotate_inv(q_root, vec3_at(body_ang_vel, i, ROOT))", 3
    ),
    "joint_pos": Block("joint", ("q",), values=((0, "dq", "dq = q - Q0[j]"),)),
    "joint_vel": Block("joint", values=((0, "qd", "qd = float(joint_vel[i, j])"),)),
    "actions": Block("joint", ("a",), values=((0, "a", ""),)),
}

# Snapshot array (spec E3 name) -> kernel argument, in the kernel's argument order.
ARGS = {
    "body_pos_w": "body_pos",
    "body_lin_vel_w": "body_lin_vel",
    "body_ang_vel_w": "body_ang_vel",
    "body_quat_w": "body_quat",
    "joint_pos": "joint_pos",
    "joint_vel": "joint_vel",
    "actions": "actions",
    "last_actions": "last_actions",
    "motion_joint_pos": "motion_joint_pos",
    "motion_joint_vel": "motion_joint_vel",
    "motion_body_pos_w": "motion_pos",
    "motion_body_lin_vel_w": "motion_lin_vel",
    "motion_body_ang_vel_w": "motion_ang_vel",
    "motion_body_quat_w": "motion_quat",
    "time_steps": "time_steps",
    "noise_u": "noise_u",
    "rel_body_pos": "rel_pos",
    "rel_body_quat": "rel_quat",
}


@dataclass(frozen=True)
class Write:
    """One destination of an observation block: output array, first column, noise scale (level included)."""

    out: str
    column: int
    noise: float
    noise_column: int | None


def _params(name: str, p: object) -> dict[str, str]:
    values = {key: literal(v) for key, v in vars(p).items()}
    if "std" in values:
        bodies = NB if name in MEAN_OVER_BODIES else 1
        values["inv_var"] = literal(1.0 / (bodies * p.std * p.std))
    return values


def _out_name(k: int, group: str) -> str:
    return f"out_{group}"  # plans only admit identifiers as group names


def _writes(plan: TaskPlan) -> dict[str, list[Write]]:
    """Library observation term -> every place the plan writes it (each group, included groups' columns too)."""
    writes: dict[str, list[Write]] = {}
    for k, group in enumerate(plan.observations):
        for term, column in plan.layout(group.name):
            noise = plan.noise_level * term.noise
            writes.setdefault(term.fn, []).append(
                Write(
                    _out_name(k, group.name),
                    column,
                    noise,
                    plan.definition(term).noise_column if noise else None,
                )
            )
    return writes


def _store(w: Write, column: str, noise_column: str, value: str) -> str:
    if not w.noise:
        return f"{w.out}[i, {column}] = {value}"
    return f"{w.out}[i, {column}] = {value} + ({literal(2.0 * w.noise)} * noise_u[i, {noise_column}] - {literal(w.noise)})"


def generate(plan: TaskPlan) -> str:
    """The source of a module defining ``update_state_kernel`` for ``plan``."""
    writes = _writes(plan)
    needs = _needs(plan, writes)
    lanes = Lanes.of(needs, writes)

    src = Source()
    _emit_lane_pass(src, lanes)
    codegen.kernel(
        src,
        args=[*ARGS.values(), *codegen.outputs(plan)],
        scratch=["scratch", "lane_scratch"],
        n_from="body_pos",
        fastmath=False,
        prologue=["last_frame = motion_pos.shape[0] - 1"],
    )
    src(
        "t = time_steps[i]",
        "t1 = min(t + 1, last_frame)",
        "pa = vec3_at(body_pos, i, A)",
        "qa = quat_at(body_quat, i, A)",
        "pm1 = vec3_at(motion_pos, t1, A)",
        "qm1 = quat_at(motion_quat, t1, A)",
    )
    for name, (_, lines) in BLOCKS.items():
        if name in needs:
            src(*lines)

    # (1) Terminations (spec B4) against frame t and the incoming p̃/q̃, before the body store loop replaces them.
    codegen.terminations(
        src, (TERMINATIONS[t.fn].lines[0].format(**_params(t.fn, t.params)) for t in plan.terminations)
    )

    # (2) Yaw alignment of frame t' onto the robot anchor (spec B2).
    src("delta_q = quat_yaw(quat_mul(qa, quat_conj(qm1)))", "delta_r = quat_to_mat(delta_q)")

    _emit_body_loop(src, needs, writes, lanes)
    _emit_joint_loop(src, needs, writes)
    _emit_env_blocks(src, writes)

    # Rewards (spec B3), with parameters and weights as literals.
    codegen.rewards(
        src,
        plan,
        lambda k, r: (line.format(out=f"f{k}", **_params(r.fn, r.params)) for line in REWARDS[r.fn].lines),
    )
    codegen.end_kernel(src)
    return codegen.module(
        plan=plan,
        layout=task,
        helpers=HELPERS,
        constants={
            "DT": literal(plan.dt),
            "NB": str(NB),
            "NJ": str(NJ),
            "A": str(task.ANCHOR),
            "ROOT": str(task.ROOT),
            "Q0": codegen.array(task.DEFAULT_POSE),
            "SOFT_LO": codegen.array(task.SOFT_LOWER),
            "SOFT_HI": codegen.array(task.SOFT_UPPER),
            "LANE_SIZE": f"{lanes.size}  # the doubles of one thread's lanes",
            **lanes.constants(),
        },
        body=src,
    )


HELPERS = {
    "kernels.geometry": (
        "R22",
        "mat_t_vec",
        "mat_vec",
        "quat_at",
        "quat_conj",
        "quat_diff_angle",
        "quat_diff_angle_branchless",
        "quat_mul",
        "quat_rotate_inv",
        "quat_to_6d",
        "quat_to_mat",
        "quat_yaw",
        "sq_norm3",
        "sub3",
        "vec3_at",
    ),
    "kernels.scalar": ("LANES", "lanes3", "lanes4", "reduce_means", "set_lanes"),
}


def _needs(plan: TaskPlan, writes: dict[str, list[Write]]) -> set[str]:
    """The shared blocks, sums and loop locals the plan's terms need, with what those need in turn."""
    needs: set[str] = set()
    for snippet in [*(TERMINATIONS[t.fn] for t in plan.terminations), *(REWARDS[r.fn] for r in plan.rewards)]:
        needs.update(snippet.needs)
    for fn in writes:
        needs.update(OBSERVATIONS[fn].needs)
    for table in (BODY_SUMS, LANE_SUMS, JOINT_SUMS):
        for name, (local_names, _) in table.items():
            if name in needs:
                needs.update(local_names)
    for name in reversed(BLOCKS):  # a block only needs blocks listed before it
        if name in needs:
            needs.update(BLOCKS[name][0])
    return needs


@dataclass(frozen=True)
class Lanes:
    """The per-body lane pass of a plan: lane rows (name -> first row, width), its inputs and outputs, and the
    per-env values it takes besides the anchors and the yaw alignment."""

    rows: dict[str, tuple[int, int]]
    inputs: tuple[str, ...]  # body locals
    sums: tuple[str, ...]
    blocks: tuple[str, ...]  # body-scope observation terms
    env_args: tuple[str, ...]

    @classmethod
    def of(cls, needs: set[str], writes: dict[str, list[Write]]) -> Lanes:
        sums = tuple(name for name in LANE_SUMS if name in needs)
        blocks = tuple(fn for fn, block in OBSERVATIONS.items() if block.scope == "body" and fn in writes)
        wanted = {n for s in sums for n in LANE_SUMS[s][0]} | {
            n for fn in blocks for n in OBSERVATIONS[fn].needs
        }
        inputs = tuple(name for name in BODY_LOCALS if name in wanted)
        env_args = tuple(name for name in BLOCKS if name in wanted)
        widths = [("motion_pos1", 3), ("motion_quat1", 4)]
        widths += [(name, BODY_LOCALS[name][0]) for name in inputs]
        widths += [(name, 1) for name in sums] + [("new_rel_pos", 3), ("new_rel_quat", 4)]
        widths += [(OBSERVATIONS[fn].name, OBSERVATIONS[fn].width) for fn in blocks]
        rows, row = {}, 0
        for name, width in widths:
            rows[name] = (row, width)
            row += width
        return cls(rows, inputs, sums, blocks, env_args)

    @property
    def size(self) -> int:
        return sum(width for _, width in self.rows.values()) * LANES

    def constants(self) -> dict[str, str]:
        """The first lane row of each name, as module constants of the generated module."""
        return {self.row(name): str(row) for name, (row, _) in self.rows.items()}

    @staticmethod
    def row(name: str) -> str:
        return f"ROW_{name.upper()}"

    def at(self, name: str, k: int = 0) -> str:
        """Lane b of row k of ``name``, as generated code."""
        return f"lanes[({self.row(name)} + {k}) * LANES + b]" if k else f"lanes[{self.row(name)} * LANES + b]"

    def read(self, name: str) -> str:
        return f"lanes{self.rows[name][1]}(s, {self.row(name)}, b)"

    def write(self, name: str, value: str, array: str = "s") -> str:
        return f"set_lanes({array}, {self.row(name)}, b, {value})"


def _emit_lane_pass(src: Source, lanes: Lanes) -> None:
    """The module-level function of the per-body pass: one branch-free loop over the lanes, which LLVM
    vectorises (the numpy error model keeps Python's zero-division branch out of it)."""
    src(
        '@njit(error_model="numpy")',
        f"def body_lanes({', '.join(['s', 'pa', 'pm1', 'delta_r', 'delta_q', *lanes.env_args])}):",
    ).indent()
    src("for b in range(LANES):").indent()
    src(*(f"{name} = {lanes.read(name)}" for name in lanes.inputs))
    for name in lanes.sums:
        src(*LANE_SUMS[name][1], lanes.write(name, "(term,)"))
    src(
        f"offset = mat_vec(delta_r, sub3({lanes.read('motion_pos1')}, pm1))",
        lanes.write("new_rel_pos", "(pa[0] + offset[0], pa[1] + offset[1], pm1[2] + offset[2])"),
        lanes.write("new_rel_quat", f"quat_mul(delta_q, {lanes.read('motion_quat1')})"),
    )
    for fn in lanes.blocks:
        block = OBSERVATIONS[fn]
        src(f"# {fn}", lanes.write(block.name, block.value))
    src.dedent().dedent()
    src("", "")


def _emit_body_loop(src: Source, needs: set[str], writes: dict[str, list[Write]], lanes: Lanes) -> None:
    """The bodies: a gather loop for the sums of the reward errors (1) that fills the lanes, the lane pass for
    the rest of (1), the p̃/q̃ update every plan has (2) and the body blocks (3), and a loop storing its results."""
    body_sums = [name for name in BODY_SUMS if name in needs]
    locals_ = [name for name in BODY_LOCALS if name in needs]  # the lane inputs are among them
    src("lanes = lane_scratch[tid]", *(f"{name} = 0.0" for name in body_sums), "for b in range(NB):").indent()
    src(*(BODY_LOCALS[name][1] for name in locals_))
    for name in body_sums:
        src(*BODY_SUMS[name][1])
    src(
        *(lanes.write(name, name, "lanes") for name in lanes.inputs),
        lanes.write("motion_pos1", "vec3_at(motion_pos, t1, b)", "lanes"),
        lanes.write("motion_quat1", "quat_at(motion_quat, t1, b)", "lanes"),
    )
    src.dedent()
    src(f"body_lanes({', '.join(['lanes', 'pa', 'pm1', 'delta_r', 'delta_q', *lanes.env_args])})")
    src(*(f"{name} = 0.0" for name in lanes.sums), "for b in range(NB):").indent()
    src(
        *(f"{name} += {lanes.at(name)}" for name in lanes.sums),
        *(f"rel_pos[i, b, {k}] = {lanes.at('new_rel_pos', k)}" for k in range(3)),
        *(f"rel_quat[i, b, {k}] = {lanes.at('new_rel_quat', k)}" for k in range(4)),
    )
    for fn in lanes.blocks:
        block = OBSERVATIONS[fn]
        src(f"# {fn}")
        for w in writes[fn]:
            columns = [
                f"{w.column} + {block.width_name} * b" + (f" + {k}" if k else "") for k in range(block.width)
            ]
            src(*(_store(w, column, "", lanes.at(block.name, k)) for k, column in enumerate(columns)))
    src.dedent()


def _emit_joint_loop(src: Source, needs: set[str], writes: dict[str, list[Write]]) -> None:
    """One pass over the joints, if the plan has joint terms: joint sums (1) and the per-joint blocks (3)."""
    joint_sums = [name for name in JOINT_SUMS if name in needs]
    joint_blocks = [fn for fn, block in OBSERVATIONS.items() if block.scope == "joint" and fn in writes]
    if joint_sums or joint_blocks:
        src(*(f"{name} = 0.0" for name in joint_sums), "for j in range(NJ):").indent()
        src(*(line for name, line in JOINT_LOCALS.items() if name in needs))
        for name in joint_sums:
            src(*JOINT_SUMS[name][1])
        for fn in joint_blocks:
            src(f"# {fn}")
            for offset, local, line in OBSERVATIONS[fn].values:
                src(*([line] if line else []))
                for w in writes[fn]:
                    column, noise_column = w.column + offset, (w.noise_column or 0) + offset
                    src(_store(w, f"{column} + j" if column else "j", f"{noise_column} + j", local))
        src.dedent()


def _emit_env_blocks(src: Source, writes: dict[str, list[Write]]) -> None:
    """(3) The anchor and base blocks at frame t', in the robot anchor / pelvis frame."""
    for fn, block in OBSERVATIONS.items():
        if block.scope == "env" and fn in writes:
            src(f"# {fn}", f"{block.name} = {block.value}")
            for w in writes[fn]:
                noise_column = w.noise_column or 0
                src(
                    *(
                        _store(w, w.column + k, noise_column + k, f"{block.name}[{k}]")
                        for k in range(block.width)
                    )
                )


class AssembledMotion(codegen.AssembledKernel):
    task_module = task
    snapshot = tuple(ARGS)
    generate = staticmethod(generate)

    def extra_scratch(self) -> tuple[np.ndarray, ...]:
        return (padded_scratch(max_threads(), self.module.LANE_SIZE),)
