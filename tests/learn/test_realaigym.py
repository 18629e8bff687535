"""The RealAIGym disturbance protocol: tip height from the privileged state by hand, pushes in
place of the world's own, and the score of a policy that never swings up."""

from types import SimpleNamespace

import numpy as np
import pytest

from sim2real.learn.realaigym import (
    DisturbanceProtocol,
    disturbed,
    protocol_score,
    tip_height_fn,
)
from sim2real.learn.reality import Reality, load_reality
from sim2real.learn.vec import ObsGroup, ObsTerm


def _env(names, scales=None):
    scales = scales or {}
    terms = tuple(ObsTerm(n, scales.get(n, 1.0)) for n in names)
    return SimpleNamespace(env_id="test", obs_groups={"privileged": ObsGroup(terms)})


def test_pendulum_tip_from_the_scaled_cosine():
    env = _env(["qvel_true", "cos_q_true"], {"cos_q_true": 0.5})
    height = tip_height_fn(env)
    obs = np.array([[3.0, 0.5 * np.cos(0.0)], [0.0, 0.5 * np.cos(np.pi)], [0, 0.5 * np.cos(1.0)]])
    np.testing.assert_allclose(height(obs), [-1.0, 1.0, -np.cos(1.0)])


@pytest.mark.parametrize(
    ("q1", "q2", "expect"),
    [(0.0, 0.0, -1.0), (np.pi, 0.0, 1.0), (np.pi, np.pi, (0.3 - 0.2) / 0.5),
     (np.pi / 2, 0.0, 0.0), (np.pi / 2, np.pi / 2, 0.2 / 0.5)],
)  # fmt: skip
def test_double_pendulum_tip_by_hand(q1, q2, expect):
    names = ["cos_q1_true", "sin_q1_true", "cos_q2_true", "sin_q2_true"]
    obs = np.array([[np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)]])
    np.testing.assert_allclose(tip_height_fn(_env(names))(obs), [expect], atol=1e-12)


def test_the_protocol_pushes_replace_the_worlds_own():
    world = load_reality("identified-shifted")
    protocol = DisturbanceProtocol(push_Nm=0.3, interval_s=(2.0, 3.0))
    terms = disturbed(world, protocol).randomization["terms"]
    pushes = [t for t in terms if t["target"] == "env.push_Nm"]
    assert len(pushes) == 1 and pushes[0]["range"] == [-0.3, 0.3]
    assert pushes[0]["interval_s"] == [2.0, 3.0]
    kept = [t["name"] for t in terms if t["target"] != "env.push_Nm"]
    assert kept == [t["name"] for t in world.randomization["terms"]]
    own = Reality(randomization={"terms": [{"name": "p", "target": "env.push_Nm"}]})
    assert [t["name"] for t in disturbed(own, protocol).randomization["terms"]] == [
        "realaigym_push"
    ]


def test_a_policy_that_does_nothing_scores_zero_and_is_pushed():
    pushed_steps = []

    class Still:  # no torque: the pendulum hangs, pushes only rock it
        env_id = "sim2real/PendulumSwingup-v0"

        def __init__(self):
            self.env_config = {}

        def act(self, obs):
            pushed_steps.append(obs["privileged"][:, push_index] > 0)
            return np.zeros((obs["policy"].shape[0], 1))

    from sim2real.learn.envs import make_vec

    terms = make_vec(Still.env_id, 1).obs_groups["privileged"].terms
    push_index = [t.name for t in terms].index("push_active")
    protocol = DisturbanceProtocol(episode_s=10.0, interval_s=(1.0, 2.0), episodes=4)
    score = protocol_score(Still(), load_reality("identified-shifted"), protocol, seed=3)
    assert score.score == 0.0 and not score.swung_up.any()
    assert score.above.shape == (4,)
    assert len(pushed_steps) == round(10.0 / 0.01)  # one pass of the 10 s episode
    # a push every 1-2 s lasting 0.19 s: 5-9 pushes of 19 steps in each 1000-step episode
    per_env = np.sum(pushed_steps, axis=0)
    assert ((per_env >= 4 * 19) & (per_env <= 10 * 20)).all(), per_env


def test_cli_prints_a_score_per_world(tmp_path):
    from cli_helpers import assert_one_line_error, run_cli

    from sim2real.learn.train import TrainConfig, train

    cfg = TrainConfig(total_env_steps=8 * 16, num_envs=8, steps_per_env=16)
    train(tmp_path / "run", "sim2real/PendulumSwingup-v0", train_config=cfg, quiet=True)
    args = ("policy", "eval", str(tmp_path / "run"), "--realaigym", "--episodes", "2")
    proc = run_cli(*args, "--reality", "identified-shifted", "--reality", "our-fit")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[1].startswith("  identified-shifted: RealAIGym score ")
    assert lines[2].startswith("  our-fit: RealAIGym score ")
    assert "over 2 pushed episodes of 60 s" in lines[1]
    last = proc.stderr.strip().splitlines()[-1]  # piped: the grid's progress at its end
    assert last.startswith("evaluate 100%"), proc.stderr
    # the cells in local worker processes or here, in order: the same scores, in the same order
    from sim2real.learn.realaigym import DisturbanceProtocol, score_runs

    grid = ([tmp_path / "run"], ["identified-shifted", "our-fit"])
    kw = {"protocol": DisturbanceProtocol(episodes=2, episode_s=2.0), "seed": 3}
    here, shares = score_runs(*grid, **kw), []
    workers = score_runs(*grid, **kw, processes=2, progress=lambda *a: shares.append(a))
    assert [s.to_dict() for s in workers[str(tmp_path / "run")]] == [
        s.to_dict() for s in here[str(tmp_path / "run")]
    ]
    assert [w.world for w in here[str(tmp_path / "run")]] == ["identified-shifted", "our-fit"]
    assert shares[-1] == (2, 2, "2 of 2 cells evaluated")
    quiet = run_cli(*args, "--reality", "our-fit", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    bad = run_cli(*args, "--report", str(tmp_path / "rep"))
    assert_one_line_error(bad, "--report", "--realaigym")
    assert not (tmp_path / "rep").exists()
