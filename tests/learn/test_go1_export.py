"""The export contract of legged tasks (issue 18, part 3) on sim2real/Go1Velocity-v0:
policy.json's joints, default pose, action scale, gains, control period, history and
observation terms in order with scales (no privileged term); the robot-side runner against the
training policy on recorded observations, joint targets included; refused inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from sim2real.core.errors import InputError
from sim2real.learn.deploy import DeployedPolicy
from sim2real.learn.envs import go1, make_vec
from sim2real.learn.export import export_policy
from sim2real.learn.policy import PolicyMeta, load_policy, save_policy
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.vec import ObsRoles

TERMS = [
    *(f"base_ang_vel[{k}]" for k in range(3)),
    *(f"projected_gravity[{k}]" for k in range(3)),
    *(f"command[{k}]" for k in range(3)),
    *(f"joint_pos[{k}]" for k in range(12)),
    *(f"joint_vel[{k}]" for k in range(12)),
    *(f"last_action[{k}]" for k in range(12)),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("go1")
    config = {"episode_s": 0.6}
    env = make_vec(go1.ENV_ID, 1, seed=4, config=config)
    torch.manual_seed(0)
    net = NetConfig(actor_hidden=[32], init_std=0.5)
    actor = Actor(env.obs_groups["policy"].dim, env.action_dim, net)
    torch.nn.init.normal_(actor.net[-1].weight, std=0.3)
    meta = PolicyMeta.from_env(env, ObsRoles(), env_config=config, net=net)
    save_policy(tmp / "run", actor, meta)
    export_policy(tmp / "run", tmp / "out")
    return env, tmp


def test_policy_json_holds_the_contract(exported):
    _, tmp = exported
    spec = json.loads((tmp / "out" / "policy.json").read_text())
    assert spec["joint_names"] == list(go1.JOINTS)
    assert spec["default_joint_pos"] == pytest.approx([0.1, 0.9, -1.8, -0.1, 0.9, -1.8] * 2)
    kp_hip = 0.000111842 * 36 * (20 * np.pi) ** 2
    assert spec["kp"][:3] == pytest.approx([kp_hip, kp_hip, kp_hip * 81 / 36])
    assert spec["kd"][0] == pytest.approx(2 * 2.0 * 0.000111842 * 36 * 20 * np.pi)
    assert spec["action_scale"][:3] == pytest.approx(
        [23.7 / kp_hip] * 2 + [35.55 / (kp_hip * 2.25)]
    )
    assert spec["control_dt"] == 0.02 and spec["history"] == 1
    assert [t["name"] for t in spec["obs_terms"]] == TERMS  # no base_lin_vel: not deployable
    scales = {t["name"]: t["scale"] for t in spec["obs_terms"]}
    assert scales["base_ang_vel[0]"] == 0.25 and scales["joint_vel[5]"] == 0.05
    assert spec["actuator"]["kind"] == "joint_motors"
    assert spec["actuator"]["types"]["*_calf_joint"]["tau_max_Nm"] == 35.55


def test_the_runner_matches_the_training_policy_on_recorded_observations(exported):
    # a rollout of the environment records what the robot would measure; the runner, fed
    # those measurements alone, gives the training policy's actions and the env's targets
    env, tmp = exported
    policy, deployed = load_policy(tmp / "run"), DeployedPolicy(tmp / "out", list(go1.JOINTS))
    scales = np.array([t.scale for t in env.obs_groups["policy"].terms])
    obs, diffs, resets = env.reset(seed=4), [], 0
    for _ in range(70):
        raw = obs["policy"][0] / scales
        measurement = {
            "base_ang_vel": raw[0:3], "projected_gravity": raw[3:6], "command": raw[6:9],
            "joint_pos": raw[9:21] + env.legged.default, "joint_vel": raw[21:33],
        }  # fmt: skip
        expected = policy.act(obs)[0]
        targets = deployed.joint_targets(measurement)
        diffs.append(np.abs(targets - env.legged.targets(expected[None])[0]).max())
        res = env.step(expected[None])
        obs = res.obs
        if res.truncated[0] or res.terminated[0]:
            deployed.reset()
            resets += 1
    assert resets >= 2 and max(diffs) < 1e-5
    with pytest.raises(InputError, match="joint_targets"):  # its actions are no torques
        deployed.torque(measurement)


def test_a_policy_of_another_robot_is_refused_in_one_line(exported):
    _, tmp = exported
    other = [j.replace("calf", "knee") for j in go1.JOINTS]
    with pytest.raises(InputError) as err:
        DeployedPolicy(tmp / "out", other)
    assert err.value.field == "joint_names" and "\n" not in str(err.value)
    assert "another robot" in str(err.value)


def test_a_legged_policy_json_missing_a_field_is_refused(exported, tmp_path):
    _, tmp = exported
    for name in ("policy.onnx", "policy.json"):
        (tmp_path / name).write_bytes((tmp / "out" / name).read_bytes())
    spec = json.loads((tmp_path / "policy.json").read_text())
    del spec["kd"]
    (tmp_path / "policy.json").write_text(json.dumps(spec))
    with pytest.raises(InputError) as err:
        DeployedPolicy(tmp_path)
    assert err.value.field == "kd"
    spec["kd"] = [1.0] * 11
    (tmp_path / "policy.json").write_text(json.dumps(spec))
    with pytest.raises(InputError, match="12 finite numbers"):
        DeployedPolicy(tmp_path)


def test_train_a_few_iterations_then_export_and_run_on_the_robot_side(tmp_path):
    # the learners take the Go1 as any task: two PPO iterations, export, the runner loads it
    from sim2real.learn.train import TrainConfig, train

    cfg = TrainConfig(total_env_steps=2 * 8 * 16, num_envs=8, steps_per_env=16, seed=0)
    train(tmp_path / "run", go1.ENV_ID, train_config=cfg, quiet=True)
    export_policy(tmp_path / "run", tmp_path / "out")
    deployed = DeployedPolicy(tmp_path / "out", list(go1.JOINTS))
    zero = {"base_ang_vel": np.zeros(3), "projected_gravity": [0, 0, -1.0], "command": [0.5, 0, 0],
            "joint_pos": deployed.default_joint_pos, "joint_vel": np.zeros(12)}  # fmt: skip
    targets = deployed.joint_targets(zero)
    assert targets.shape == (12,) and np.all(np.abs(targets - deployed.default_joint_pos) <= 0.38)
