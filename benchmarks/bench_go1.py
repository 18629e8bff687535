"""Throughput of sim2real/Go1Velocity-v0 beside bare ``mujoco.rollout`` of the same batch.

python benchmarks/bench_go1.py [--envs 64 256] [--steps 100] [--repeat 5] [--nthread 0]
                               [--networks HIP.yaml KNEE.yaml]

Steps are control steps of one environment (50 Hz, 4 physics substeps of 5 ms). Three rates,
medians over ``repeat`` runs measured alternately so machine load hits all three:

- "bare": the environment's own N model copies stepped by one ``mujoco.rollout`` call per
  control step (4 substeps) from the states and under the per-substep torques recorded in a
  run of the environment (the same physics, contacts and autoresets: the state is set before
  each call): the physics alone, the fastest the batch can step;
- "bare/substep": the same with one call per substep (the structure the motors in the loop
  need: their torques depend on the state at every substep);
- "env": ``VecEnv.step`` with random actions under the default randomization: the motors'
  PD and envelope in numpy at every substep, terms, events, delay line, noise, commands,
  autoresets.

The ratios env / bare and env / (bare/substep) say what the environment costs over the
physics, and how much of that is the per-substep stepping. ``--networks``: learned actuator
networks (``actuator fit --model net``) on the hip/thigh and knee joints instead of the
physical motor law. ``uptime`` is printed beside.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import numpy as np

from sim2real.learn.envs import make_vec

ENV = "sim2real/Go1Velocity-v0"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def rate(fn, steps: int, num: int) -> float:
    t = time.perf_counter()
    for k in range(steps):
        fn(k)
    return steps * num / (time.perf_counter() - t)


def bench(n: int, steps: int, repeat: int, nthread: int, networks=None) -> tuple[float, ...]:
    config: dict = {"nthread": nthread}
    if networks:
        config["actuator_networks"] = {"*_calf_joint": networks[1], "*": networks[0]}
    env = make_vec(ENV, n, seed=0, config=config)
    env.reset()
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, env.action_dim))
    st, nsub, act = env.stepper, env.nsub, env.act
    # one recorded run: the state at each control step's start (autoresets included) and the
    # motors' torque at each substep, so "bare" steps the very same physics (same contacts)
    states = np.empty((steps, n, st.nstate))
    ctrl = np.zeros((steps, n, nsub, st.nu))
    torque, taken = act.motors.torque, []

    def recording(*a):
        taken.append(torque(*a))
        return taken[-1]

    act.motors.torque = recording
    for k in range(steps):
        states[k] = st.state
        taken.clear()
        env.step(actions[k])
        ctrl[k][..., act.act_index] = np.stack(taken, axis=1)
    act.motors.torque = torque
    qfrc = np.zeros((n, nsub, st.nv))

    def bare(k):
        st.state[:] = states[k]
        st.step(ctrl[k], qfrc, states=False)

    def bare_substep(k):
        st.state[:] = states[k]
        for s in range(nsub):
            st.step(ctrl[k, :, s : s + 1], qfrc[:, s : s + 1], states=False)

    rates: list[list[float]] = [[], [], []]
    for _ in range(repeat):
        rates[0].append(rate(bare, steps, n))
        rates[1].append(rate(bare_substep, steps, n))
        env.reset()
        rates[2].append(rate(lambda k: env.step(actions[k]), steps, n))
    env.close()
    return tuple(float(np.median(r)) for r in rates)  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nthread", type=int, default=0)
    ap.add_argument("--networks", nargs=2, default=None, metavar=("HIP_YAML", "KNEE_YAML"))
    args = ap.parse_args()
    print(f"before: {uptime()}")
    print(
        "| N | bare steps/s | bare/substep steps/s | env steps/s | env / bare | env / bare/substep |"
    )
    print("|---|---|---|---|---|---|")
    for n in args.envs:
        b, bs, e = bench(n, args.steps, args.repeat, args.nthread, args.networks)
        print(f"| {n} | {b:,.0f} | {bs:,.0f} | {e:,.0f} | {e / b:.2f} | {e / bs:.2f} |")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
