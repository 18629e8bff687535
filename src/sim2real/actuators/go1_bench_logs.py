"""SIMULATED bench logs of the Unitree Go1's motors, in the bench format (BAM JSON): no Go1
motor logs are public, so logs simulated from the physical motor model
(:mod:`sim2real.actuators.go1_motors` on :mod:`sim2real.actuators.joint_motors`: PD, the
torque-speed envelope) on the simulated benches ``go1-hip-bench`` / ``go1-knee-bench`` (a mass
on the output shaft, MuJoCo) serve to exercise the learned actuator path end to end:
``actuator fit --bench go1-hip-bench --model net`` on them, the network in the Go1 task.
Every log says so in its header (``simulated: true``, ``source``); a network trained on them
learns the model they came from, nothing about a real Go1.

Goal trajectories: random holds (steps to a level in +-1.5 rad) and sines (0.5-4 Hz, amplitude
0.2-1.2 rad around a level), 0.3-1.0 s each, one sample every 5 ms (the task's substep).

``python -m sim2real.actuators.go1_bench_logs OUT_DIR`` writes hip and knee logs, seeds 0-2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from sim2real.actuators.go1_motors import HIP, KNEE, ROTOR_KGM2
from sim2real.actuators.inverse_dynamics import bench_mjcf
from sim2real.actuators.joint_motors import JointMotorsConfig
from sim2real.core.atomic import write_text_atomic

KINDS = {"hip": HIP, "knee": KNEE}


def goal_trajectory(rng: np.random.Generator, n: int, dt_s: float) -> np.ndarray:
    """(n,) goal positions [rad]: holds and sines of random lengths."""
    out, k, level = np.empty(n), 0, 0.0
    while k < n:
        m = min(n - k, int(rng.uniform(0.3, 1.0) / dt_s))
        level = float(rng.uniform(-1.5, 1.5))
        if rng.random() < 0.5:
            out[k : k + m] = level
        else:
            t = np.arange(m) * dt_s
            amp, freq = rng.uniform(0.2, 1.2), rng.uniform(0.5, 4.0)
            out[k : k + m] = level + amp * np.sin(2 * np.pi * freq * t)
        k += m
    return out


def simulate_log(kind: str, seed: int, duration_s: float = 20.0) -> dict:
    """One simulated log of the Go1 ``kind`` motor ("hip": hip and thigh, "knee") on its
    bench, as the BAM JSON mapping."""
    import mujoco

    motor, bench = KINDS[kind], f"go1-{kind}-bench"
    model = mujoco.MjModel.from_xml_path(str(bench_mjcf(bench)))
    data = mujoco.MjData(model)
    motors = JointMotorsConfig(types={"*": motor}, rotor_inertia_kgm2=ROTOR_KGM2).build(["horn"])
    dt = float(model.opt.timestep)
    n = round(duration_s / dt)
    goal = goal_trajectory(np.random.default_rng(seed), n, dt)
    entries = []
    for k in range(n):
        q, qd = float(data.qpos[0]), float(data.qvel[0])
        entries.append({"timestamp": round(k * dt, 9), "goal_position": float(goal[k]),
                        "position": q, "speed": qd, "torque_enable": True})  # fmt: skip
        tau = motors.torque(np.array([[goal[k]]]), np.array([[q]]), np.array([[qd]]))
        data.qfrc_applied[0] = float(tau[0, 0])
        mujoco.mj_step(model, data)
    body = model.body("arm")
    return {
        "simulated": True,
        "source": f"SIMULATED from sim2real.actuators.go1_motors ({kind} motor) on {bench}: "
        "no Go1 motor logs are public",
        "bench": bench,
        "mass": float(body.mass[0]),
        "length": float(np.linalg.norm(body.ipos)),
        "kp": float(motor.kp_Nm_rad),
        "vin": 24.0,
        "trajectory": f"simulated holds and sines, seed {seed}",
        "entries": entries,
    }


def write_logs(
    out_dir: str | Path, kinds=("hip", "knee"), seeds=(0, 1, 2), duration_s: float = 20.0
) -> list[Path]:
    """Write ``simulated-go1-<kind>-<seed>.json`` for each kind and seed; their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in kinds:
        for seed in seeds:
            path = out / f"simulated-go1-{kind}-{seed}.json"
            write_text_atomic(path, json.dumps(simulate_log(kind, seed, duration_s)))
            paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_logs(sys.argv[1] if len(sys.argv) > 1 else "go1-bench-logs"):
        print(p)
