"""The export contract (policy.onnx + policy.json) and the robot-side runner."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.core.errors import InputError
from sim2real.learn.deploy import DeployedPolicy
from sim2real.learn.export import export_policy
from sim2real.learn.policy import load_policy
from sim2real.learn.train import TrainConfig, train
from sim2real.learn.vec import ObsRoles

_CFG = TrainConfig(total_env_steps=16 * 32 * 6, num_envs=16, steps_per_env=32)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    train(root / "run", TOY_ENV_ID, train_config=_CFG, make_env=make_toy_vec, quiet=True)
    export_policy(root / "run", root / "out")
    return root / "run", root / "out"


def test_onnx_graph_has_the_contracted_input_and_output(exported):
    _, out = exported
    model = onnx.load(out / "policy.onnx")
    onnx.checker.check_model(model)
    (inp,), (outp,) = model.graph.input, model.graph.output
    dims = lambda v: [d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    assert inp.name == "obs" and dims(inp) == [1, 10]  # history 2 x 5 terms
    assert outp.name == "action" and dims(outp) == [1, 1]
    assert inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert outp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    spec = json.loads((out / "policy.json").read_text())
    assert spec["env"] == TOY_ENV_ID and spec["control_dt"] == 0.05
    assert spec["action_limit"] == [4.0] and spec["history"] == 2
    assert spec["obs_terms"] == [
        {"name": "q", "scale": 1.0},
        {"name": "cos_q", "scale": 1.0},
        {"name": "sin_q", "scale": 1.0},
        {"name": "qvel", "scale": 0.2},
        {"name": "prev_action", "scale": 1.0},
    ]


def _side_by_side(policy, deployed, env, obs, steps: int, measure):
    """Step ``env`` with the training policy's actions while the robot-side runner acts on
    ``measure(obs)``; returns the largest action difference, the runner's actions and the
    number of episode ends (the runner is reset at each, as a robot would)."""
    diffs, actions, resets = [], [], 0
    for _ in range(steps):
        expected = policy.act(obs)[0]
        got = deployed.act(measure(obs))
        diffs.append(np.abs(got - expected).max())
        actions.append(got)
        result = env.step(expected[None])
        obs = result.obs
        if result.truncated[0]:
            deployed.reset()
            resets += 1
    return max(diffs), np.array(actions), resets


def test_runner_reproduces_the_training_policy_from_raw_measurements(exported):
    run, out = exported
    policy, deployed = load_policy(run), DeployedPolicy(out)
    env = make_toy_vec(TOY_ENV_ID, 1, seed=3)
    obs = env.reset(seed=3)
    # what a robot measures: the unwrapped angle and the speed; nothing else
    diff, actions, episode_ends = _side_by_side(
        policy, deployed, env, obs, 100,  # 2.5 episodes of 40 steps: crosses two resets
        lambda _: {"q": float(env.q[0]), "qvel": float(env.qvel[0])},
    )  # fmt: skip
    assert episode_ends == 2
    assert diff < 1e-5
    # the policy does act: not a constant action that would match trivially
    assert np.ptp(actions * deployed.action_limit) > 0.5


@pytest.mark.parametrize(
    ("measurement", "field", "why"),
    [
        ({"q": [0.1, 0.2], "qvel": [0.0, 0.0]}, "q", "2 values, the policy's robot has 1"),
        ({"q": float("nan"), "qvel": 0.0}, "q", "not finite"),
        ({"q": 0.1, "qvel": float("inf")}, "qvel", "not finite"),
        ({"q": "a", "qvel": 0.0}, "q", "expected numbers"),
        ({"q": [[0.1]], "qvel": 0.0}, "q", "shape"),
    ],
)
def test_runner_refuses_another_robots_or_a_broken_measurement(exported, measurement, field, why):
    # a torque from a NaN or from another robot's joints must never reach a motor
    _, out = exported
    deployed = DeployedPolicy(out)
    with pytest.raises(InputError, match=why) as err:
        deployed.torque(measurement)
    assert err.value.field == field


def test_runner_fills_the_history_with_the_first_frame(exported):
    _, out = exported
    deployed = DeployedPolicy(out)
    obs = deployed.observation({"q": 4.0, "qvel": 1.0})  # 4 rad wraps to 4 - 2 pi
    q = 4.0 - 2 * np.pi
    frame = np.array([q, np.cos(q), np.sin(q), 0.2, 0.0], dtype=np.float32)
    np.testing.assert_allclose(obs, np.tile(frame, 2), atol=1e-6)
    obs = deployed.observation({"q": 0.5, "qvel": -1.0})
    np.testing.assert_allclose(obs[:5], frame, atol=1e-6)  # oldest first
    deployed.reset()
    assert deployed.prev_action.tolist() == [0.0]


def test_runner_imports_neither_torch_nor_mujoco(exported):
    _, out = exported
    code = (
        "import sys; from sim2real.learn.deploy import DeployedPolicy; "
        f"p = DeployedPolicy({str(out)!r}); t = p.torque({{'q': 0.1, 'qvel': 0.0}}); "
        "assert t.shape == (1,); "
        "print(sorted(m for m in ('torch', 'mujoco', 'sim2real.learn.envs') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_export_refuses_a_privileged_teacher(tmp_path):
    teacher = ObsRoles(actor=("policy", "privileged"))
    train(
        tmp_path / "t",
        TOY_ENV_ID,
        train_config=TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16),
        roles=teacher,
        make_env=make_toy_vec,
        quiet=True,
    )
    assert not load_policy(tmp_path / "t").deployable
    with pytest.raises(InputError) as err:
        export_policy(tmp_path / "t", tmp_path / "out")
    assert err.value.field == "roles.actor" and "privileged" in str(err.value)
    assert not (tmp_path / "out" / "policy.onnx").exists()


def _copy(out, tmp_path, edit):
    folder = tmp_path / "edited"
    folder.mkdir(exist_ok=True)
    (folder / "policy.onnx").write_bytes((out / "policy.onnx").read_bytes())
    spec = json.loads((out / "policy.json").read_text())
    edit(spec)
    (folder / "policy.json").write_text(json.dumps(spec))
    return folder


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: s["obs_terms"].pop(), "obs_terms"),  # 8 values vs ONNX input of 10
        (lambda s: s.update(history=3), "obs_terms"),
        (lambda s: s.update(history="two"), "history"),
        (lambda s: s.pop("control_dt"), "control_dt"),
        (lambda s: s.update(action_limit=[1.0, 1.0]), "action_limit"),
        (lambda s: s["obs_terms"][1].update(scale="big"), "obs_terms[1].scale"),
        (lambda s: s.update(obs_dim=12), "obs_dim"),
    ],
)
def test_mismatched_policy_json_is_an_input_error(exported, tmp_path, edit, field):
    _, out = exported
    folder = _copy(out, tmp_path, edit)
    with pytest.raises(InputError) as err:
        DeployedPolicy(folder)
    assert err.value.field == field
    assert "policy.json" in str(err.value)
    if field in ("obs_terms", "action_limit"):
        assert "ONNX" in str(err.value)


def test_malformed_policy_json_is_an_input_error(exported, tmp_path):
    _, out = exported
    folder = _copy(out, tmp_path, lambda s: None)
    (folder / "policy.json").write_text("{not json")
    with pytest.raises(InputError, match=r"policy\.json.*not valid JSON"):
        DeployedPolicy(folder)


def test_runner_reproduces_a_pendulum_policy_from_its_measurements(tmp_path):
    # an untrained actor with fixed random weights and normalizer statistics (no training in
    # tests): what matters is that both sides compute the same function of the measurements
    from sim2real.learn.envs import make_vec
    from sim2real.learn.policy import PolicyMeta, save_policy
    from sim2real.learn.ppo import Actor, NetConfig

    config = {"episode_s": 1.0}  # 100 steps: the rollout crosses two resets
    env = make_vec("sim2real/PendulumSwingup-v0", 1, seed=7, config=config)
    torch.manual_seed(0)
    net = NetConfig(actor_hidden=[16, 16], init_std=0.5)
    actor = Actor(env.obs_groups["policy"].dim, 1, net)
    torch.nn.init.normal_(actor.net[-1].weight, std=0.2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):  # normalizer statistics from the environment's own observations
        obs = env.step(rng.uniform(-1.0, 1.0, (1, 1))).obs["policy"]
        actor.normalizer.update(
            torch.from_numpy(
                np.repeat(obs, 4, axis=0)
                + 0.1 * rng.standard_normal((4, obs.shape[1])).astype(np.float32)
            )
        )
    meta = PolicyMeta.from_env(env, ObsRoles(), env_config=config, net=net)
    save_policy(tmp_path / "run", actor, meta)
    export_policy(tmp_path / "run", tmp_path / "out")
    policy, deployed = load_policy(tmp_path / "run"), DeployedPolicy(tmp_path / "out")

    group = env.obs_groups["policy"]
    names = [t.name for t in group.terms]
    scales = np.array([t.scale for t in group.terms])

    def measured(obs):
        # the newest frame holds the measured (noisy, biased) q and qvel, times their scales
        newest = obs["policy"][0, -len(names) :] / scales
        return {"q": newest[names.index("q")], "qvel": newest[names.index("qvel")]}

    diff, actions, resets = _side_by_side(policy, deployed, env, env.reset(seed=7), 250, measured)
    assert resets == 2
    assert diff < 1e-5
    assert np.ptp(actions) > 0.2


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_corrupt_onnx_is_a_one_line_input_error(exported, tmp_path, damage):
    _, out = exported
    folder = _copy(out, tmp_path, lambda s: None)
    onnx_path = folder / "policy.onnx"
    data = onnx_path.read_bytes()
    damaged = {"truncated": data[: len(data) // 2], "garbage": b"\x00\xff" * 500, "empty": b""}
    onnx_path.write_bytes(damaged[damage])
    with pytest.raises(InputError) as err:
        DeployedPolicy(folder)
    message = str(err.value)
    assert "policy.onnx" in message and "not a readable ONNX model" in message
    assert "\n" not in message
    assert onnx_path.read_bytes() == damaged[damage]  # the input is left as it was given
