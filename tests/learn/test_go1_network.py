"""The learned actuator network path on the Go1 (issue 18, part 2), end to end on SIMULATED
logs (no Go1 motor logs are public): bench logs simulated from the physical motor model,
labelled so; ``actuator fit --model net`` on them (its library call); the networks loaded by
the task config and stepping inside the batched environment; recorded in policy.json."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from cli_helpers import assert_one_line_error, run_cli

from sim2real.actuators.go1_bench_logs import write_logs
from sim2real.actuators.go1_motors import HIP, ROTOR_KGM2
from sim2real.actuators.inverse_dynamics import inverse_dynamics
from sim2real.actuators.joint_motors import JointMotorsConfig
from sim2real.actuators.models import load_actuator
from sim2real.actuators.run import fit_actuator, replay_actuator
from sim2real.actuators.servo_log import read_servo_log
from sim2real.learn.envs import go1, make_vec
from sim2real.learn.export import export_policy
from sim2real.learn.policy import PolicyMeta, save_policy
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.vec import ObsRoles

pytestmark = pytest.mark.slow  # two networks trained (about 10 s)


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("go1net")
    logs = write_logs(tmp / "logs", seeds=(0,), duration_s=8.0)
    for kind in ("hip", "knee"):
        paths = [p for p in logs if f"-{kind}-" in p.name]
        fit_actuator(paths, f"go1-{kind}-bench", "net", validate=False).write(tmp / f"{kind}.yaml")
    return tmp


def test_the_network_replays_a_log_it_was_not_trained_on(nets):
    # another seed's trajectory: the bench simulated with the network follows the simulated
    # motor far closer than the goal itself does (the lag and saturation it learned)
    (other,) = write_logs(nets / "other", kinds=("hip",), seeds=(7,), duration_s=8.0)
    replay = replay_actuator(nets / "hip.yaml", other)
    log = read_servo_log(other)
    goal_mae = float(np.abs(log.goal_rad - log.q_rad).mean())
    assert replay.mae_rad < 0.05 and replay.mae_rad < 0.3 * goal_mae


def test_simulated_logs_are_labelled_and_their_inverse_dynamics_is_the_motor_torque(tmp_path):
    (path,) = write_logs(tmp_path, kinds=("hip",), seeds=(3,), duration_s=6.0)
    raw = json.loads(path.read_text())
    assert raw["simulated"] is True and "SIMULATED" in raw["source"]
    log = read_servo_log(path)
    assert log.simulated and log.bench == "go1-hip-bench" and log.dt_s == pytest.approx(0.005)
    # the bench's inverse dynamics recovers the physical model's torque (filtered: the
    # Savitzky-Golay window smooths the steps of the goal)
    motion = inverse_dynamics(log)
    motors = JointMotorsConfig(types={"*": HIP}, rotor_inertia_kgm2=ROTOR_KGM2).build(["horn"])
    tau = motors.torque(log.goal_rad[:, None], log.q_rad[:, None], log.qd_rad_s[:, None])[:, 0]
    inner = slice(20, -20)
    rmse = np.sqrt(np.mean((motion.tau_Nm[inner] - tau[inner]) ** 2))
    assert rmse < 0.25 * np.std(tau) and np.abs(tau).max() == pytest.approx(23.7)


def test_a_log_of_another_bench_is_refused_in_one_line(tmp_path):
    (path,) = write_logs(tmp_path, kinds=("knee",), seeds=(0,), duration_s=1.0)
    proc = run_cli("actuator", "fit", "--bench", "go1-hip-bench", "--model", "net",
                   "--logs", path, "--out", tmp_path / "a.yaml")  # fmt: skip
    assert_one_line_error(proc, "bench", "go1-knee-bench")
    assert not (tmp_path / "a.yaml").exists()


def test_networks_step_inside_the_batched_environment(nets, tmp_path):
    tmp = nets
    paths = {"*_calf_joint": str(tmp / "knee.yaml"), "*": str(tmp / "hip.yaml")}
    cfg = {"actuator_networks": paths, "episode_s": 2.0}
    env = make_vec(go1.ENV_ID, 3, seed=2, dr=None, config=cfg)
    env.reset()
    knee = load_actuator(paths["*_calf_joint"])
    assert env.stepper.models[0].dof_armature[8] == pytest.approx(knee.armature_kgm2)
    # the environment's knee torques are the network's, fed the same substep inputs by hand
    twin, rng = knee.build(), np.random.default_rng(0)
    calf = np.arange(2, 12, 3)
    motors = env.act.motors
    seen = []
    torque = motors.torque

    def spy(target, q, qd):
        seen.append((target[:, calf].copy(), q[:, calf].copy(), qd[:, calf].copy()))
        return torque(target, q, qd)

    motors.torque = spy
    for _ in range(30):
        env.step(rng.uniform(-1, 1, (3, 12)))
    from sim2real.actuators.models import ActuatorState

    state = ActuatorState(dt_s=env.timestep)
    for target, q, qd in seen:
        expected = twin.torque(target, q, qd, state)
    assert np.allclose(env.act.last_torque[:, calf], expected, atol=1e-9)
    motors.torque = torque
    # and the robot stands on them as on the physical motors (zero action from the start, 2 s)
    env.reset()
    for _ in range(99):
        res = env.step(np.zeros((3, 12)))
        assert not res.terminated.any()
    assert np.all(np.abs(env.stepper.qpos[:, 2] - 0.24) < 0.04)
    # the networks' histories are part of the saved state (exact continuation)
    state, acts = env.get_state(), rng.uniform(-1, 1, (10, 3, 12))
    first = [env.step(a).obs["policy"] for a in acts]
    env.set_state(state)
    assert all(
        np.array_equal(x, env.step(a).obs["policy"]) for x, a in zip(first, acts, strict=True)
    )
    # the actuator a policy was trained with goes into policy.json
    torch.manual_seed(0)
    net = NetConfig(actor_hidden=[8])
    actor = Actor(env.obs_groups["policy"].dim, 12, net)
    meta = PolicyMeta.from_env(env, ObsRoles(), env_config=cfg, net=net)
    save_policy(tmp_path / "run", actor, meta)
    export_policy(tmp_path / "run", tmp_path / "out")
    spec = json.loads((tmp_path / "out" / "policy.json").read_text())
    assert spec["actuator"]["kind"] == "joint_motors+networks"
    assert spec["actuator"]["networks"] == paths
