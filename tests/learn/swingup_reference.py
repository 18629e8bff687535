"""Reference trajectories of the swing-up environments as the code before the task port
(commit c1f586f, ``learn/envs/pendulum.py``'s ``SwingupVec``) stepped them, and the scenario
that makes them comparable across the change of random streams.

The port changed where random numbers come from (one stream per environment), so the
scenario takes randomness out of the comparison without taking the randomized parameters
out: after a seeded reset under the default randomization (observation noise and pushes
removed) it writes the same parameter values and start states into both codes, then steps
random actions, with a push of fixed torques written at step 60. What is compared: the
policy and privileged observations, the reward and the full physics state at every step.

``python tests/learn/swingup_reference.py`` (at the old commit) wrote
``data/swingup_reference.npz``; the port matched it until a world's torque limit became a
saturation instead of a scale (commit ff29ba5, 2026-12-07: the scenario draws limits of
0.9-1.1 N m), and it was recorded again then, with this script on the code after that commit
and no other change (the test passed on the commit before): from then on the reference holds
the stepping as it was that day.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.learn.envs import default_dr_path, make_vec
from sim2real.learn.randomization import Randomization, load_randomization

DATA = Path(__file__).parent / "data" / "swingup_reference.npz"
PENDULUM = "sim2real/PendulumSwingup-v0"
PENDUBOT = "sim2real/PendubotSwingup-v0"
SCENARIOS = {
    "pendulum": (PENDULUM, {}),
    "pendulum_pd": (PENDULUM, {"actuator": {"kind": "pd"}}),
    "pendulum_shaped": (
        PENDULUM,
        {"reward": {"energy": 1.0, "angle": 0.5}, "params": {"coulomb_Nm": 0.05}},
    ),
    # the weight the reference was recorded with (the default is 0.003 since issue 17)
    "pendubot": (PENDUBOT, {"reward": {"velocity": 0.01}}),
}
STEPS, NUM = 150, 3


def _dr(env_id: str) -> Randomization:
    dr = load_randomization(default_dr_path(env_id))
    keep = [t for t in dr.terms if "noise" not in t.name and t.mode != "interval"]
    return Randomization(terms=keep)


def run(name: str) -> dict[str, np.ndarray]:
    env_id, config = SCENARIOS[name]
    env = make_vec(env_id, NUM, seed=3, dr=_dr(env_id), config={**config, "episode_s": 5.0})
    env.reset(seed=3)
    rng = np.random.default_rng(11)
    # the same parameters and start states for both codes
    values = env.values.copy()
    scale = np.abs(env.nominal) + 1e-3
    col = env.space.names.index
    for k in range(values.shape[1]):
        if k in (col("push_Nm"),) or "noise" in env.space.names[k]:
            continue
        values[:, k] = env.nominal[k] + scale[k] * rng.uniform(-0.1, 0.1, NUM)
    env.values[:] = values
    env._startup[:] = values
    env._apply_rows(np.arange(NUM))
    nq = env.stepper.nq
    env.stepper.state[:, 1 : 1 + nq] = rng.uniform(-1.0, 1.0, (NUM, nq))
    env.stepper.state[:, 1 + nq : 1 + 2 * nq] = rng.uniform(-2.0, 2.0, (NUM, nq))
    env.history[:] = env._measure(np.arange(NUM))[:, None, :]
    actions = rng.uniform(-1.0, 1.0, (STEPS, NUM, 1))
    out = {k: [] for k in ("policy", "privileged", "reward", "state")}
    for t in range(STEPS):
        if t == 60:
            env.values[:, col("push_Nm")] = [0.3, -0.2, 0.1]
            env.push_left[:] = 50
        res = env.step(actions[t])
        out["policy"].append(res.obs["policy"])
        out["privileged"].append(res.obs["privileged"])
        out["reward"].append(res.reward)
        out["state"].append(env.stepper.state.copy())
    env.close()
    return {f"{name}.{k}": np.stack(v) for k, v in out.items()}


if __name__ == "__main__":
    DATA.parent.mkdir(exist_ok=True)
    arrays = {}
    for name in SCENARIOS:
        arrays.update(run(name))
    np.savez_compressed(DATA, **arrays)
    print(DATA, sum(a.nbytes for a in arrays.values()), "bytes")
