"""`policy replay`: an exported policy run on a real log's measured states, offline."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.learn.deploy import DeployedPolicy
from sim2real.learn.export import export_policy
from sim2real.learn.replay import replay_log
from sim2real.learn.vec import ObsRoles
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.logs import read_log, resample_log
from sim2real.sim.mapping import load_mapping

ENV = "sim2real/PendulumSwingup-v0"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """An untrained pendulum actor with fixed random weights, exported (no training in tests)."""
    from sim2real.learn.envs import make_vec
    from sim2real.learn.policy import PolicyMeta, save_policy
    from sim2real.learn.ppo import Actor, NetConfig

    root = tmp_path_factory.mktemp("replay")
    env = make_vec(ENV, 1, seed=7)
    torch.manual_seed(0)
    net = NetConfig(actor_hidden=[16, 16], init_std=0.5)
    actor = Actor(env.obs_groups["policy"].dim, 1, net)
    torch.nn.init.normal_(actor.net[-1].weight, std=0.5)
    save_policy(root / "run", actor, PolicyMeta.from_env(env, ObsRoles(), net=net))
    export_policy(root / "run", root / "out")
    return root / "out"


def test_replay_feeds_the_runner_the_logs_states_at_its_control_period(
    deployed, real_data, tmp_path
):
    log = real_data / "pendulum-dfki" / "ddp" / "data_measured.csv"
    replay = replay_log(deployed, log)
    runner = DeployedPolicy(deployed)
    states = resample_log(read_log(log, load_mapping(BUILTINS["pendulum-dfki"].mapping)), 0.01)
    assert len(replay.time_s) == len(states.time_s) and replay.time_s[1] == pytest.approx(0.01)
    runner.reset()
    by_hand = [runner.torque({"q": states.qpos[k], "qvel": states.qvel[k]}) for k in range(50)]
    assert replay.torque[:50, 0] == pytest.approx(np.ravel(by_hand), abs=1e-6)
    assert np.abs(replay.torque).max() <= 1.0 + 1e-9  # the pendulum's torque limit
    assert replay.logged[:, 0] == pytest.approx(states.ctrl[:, 0])  # the log's own command
    out = tmp_path / "replay.csv"
    proc = run_cli("policy", "replay", deployed, "--log", log, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "steps of" in proc.stdout and "RMS difference to the log's own command" in proc.stdout
    table = np.genfromtxt(out, delimiter=",", names=True)
    assert table.dtype.names == ("time_s", "q_shoulder", "qvel_shoulder",
                                 "policy_torque_shoulder", "logged_shoulder")  # fmt: skip
    assert table["policy_torque_shoulder"] == pytest.approx(replay.torque[:, 0], abs=1e-7)


def test_replay_of_another_robots_log_is_one_line(deployed, real_data, tmp_path):
    other = real_data / "double-pendulum-dfki" / "sys_id" / "trajectory_03.csv"
    out = tmp_path / "replay.csv"
    proc = run_cli("policy", "replay", deployed, "--log", other, "--out", out)
    assert_one_line_error(proc, "trajectory_03.csv", "position")
    assert not out.exists()


def test_a_log_without_velocity_gets_sysids_smoothed_derivative_and_says_so(deployed, tmp_path):
    # positions of a 1 kHz encoder (0.0015 rad steps) swinging at 0.6 rad/s amplitude: read_log's
    # sample difference is 0 or 1.5 rad/s at each sample, and the policy was fed those zeros
    t = np.arange(0.0, 2.0, 0.001)
    q = np.round(0.3 * np.sin(2.0 * t) / 0.0015) * 0.0015
    log = tmp_path / "log.csv"
    log.write_text(
        "time,position,torque\n" + "".join(f"{a},{b},0\n" for a, b in zip(t, q, strict=True))
    )
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "joints: {shoulder: {position: position}}\nactuators: {shoulder: {column: torque}}\n"
    )
    replay = replay_log(deployed, log, mapping)
    inner = (replay.time_s > 0.1) & (replay.time_s < 1.9)
    true_qvel = 0.6 * np.cos(2.0 * replay.time_s[inner])
    assert np.abs(replay.qvel[inner, 0] - true_qvel).max() < 0.05
    assert "velocity of shoulder derived from the positions" in replay.summary_lines()[0]
    short = tmp_path / "short.csv"  # 20 ms: shorter than the 50 ms fit, no velocity to derive
    short.write_text("time,position,torque\n" + "".join(f"{k / 1000},0,0\n" for k in range(20)))
    with pytest.raises(InputError, match="map the log's velocity column"):
        replay_log(deployed, short, mapping)


def test_replay_of_a_training_run_says_to_export_it(deployed):
    run = deployed.parent / "run"  # the fixture's run folder: policy.pt, no policy.json
    with pytest.raises(InputError, match=r"a training run, not an export: run `sim2real policy "
                       r"export .*run --out DIR` first"):  # fmt: skip
        replay_log(run, "unused.csv")
