"""Environments sharded over Ray actors (learn/distributed/sharded.py) on one local Ray
instance shared by the module: the gathered batch equals the local batch step for step (shards
by global index, ``env_offset``), a training run with 2 workers equals the local one, exact
resume across shards, what crosses the wire per step, close() stops the actors, and jobs (seed
sweeps, evaluation grids) as Ray tasks."""

from __future__ import annotations

import pickle
import time
from functools import partial

import numpy as np
import pytest
import torch

from sim2real.core.errors import InputError
from sim2real.core.ray_jobs import ray_runner, run_on_ray
from sim2real.learn.distributed.sharded import ShardedVecEnv, shard_bounds, sharded_make_env
from sim2real.learn.envs import ENV_IDS, TASKS, make_vec

ray = pytest.importorskip("ray")
PENDULUM = "sim2real/PendulumSwingup-v0"
SHORT = {"episode_s": 0.3, "desync_episodes": True}  # autoresets within a few dozen steps


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_shard_bounds_cover_the_batch_in_order():
    assert shard_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]  # 10 = 4 + 3 + 3
    assert shard_bounds(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert shard_bounds(7, 1) == [(0, 7)]


def _assert_same(a, b, atol=0.0):
    """Two StepResults (or observation dicts) equal bit for bit (within ``atol``)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_allclose(a[k], b[k], rtol=0, atol=atol)
        return
    for name in ("reward", "terminated", "truncated"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=atol)
    _assert_same(a.obs, b.obs, atol)
    _assert_same(a.final_obs, b.final_obs, atol)
    # a return sums the rewards (at most 80 in these tests' windows) and their rounding
    np.testing.assert_allclose(a.info["episode_return"], b.info["episode_return"], rtol=0,
                               atol=80 * atol)  # fmt: skip
    for key in ("episode_success", "episode_length"):
        np.testing.assert_array_equal(a.info[key], b.info[key])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_two_workers_step_exactly_as_the_local_batch(env_id):
    local = make_vec(env_id, 5, seed=7, config=SHORT)
    sharded = ShardedVecEnv(env_id, 5, workers=2, seed=7, config=SHORT)
    # a task over another's environment runs a policy network inside: float32 matrix products
    # of another batch size round differently (about 1e-7)
    atol = 0.0 if TASKS[env_id].vec_env is None else 1e-5
    try:
        assert sharded.bounds == [(0, 3), (3, 5)] and sharded.offset_seeding
        assert sharded.obs_groups == local.obs_groups
        _assert_same(sharded.reset(seed=7), local.reset(seed=7))
        actions = np.random.default_rng(1).uniform(-1, 1, (80, 5, local.action_dim))
        ended = 0
        for a in actions:
            mine, theirs = sharded.step(a), local.step(a)
            _assert_same(mine, theirs, atol)
            ended += int(np.sum(theirs.terminated | theirs.truncated))
        assert ended >= 5  # the window crossed autoresets in both shards
    finally:
        sharded.close()
        local.close()


def _tiny_train(run_dir, make_env, steps=128, resume=False):
    from sim2real.learn.train import TrainConfig, read_metrics, train

    cfg = TrainConfig(num_envs=4, steps_per_env=16, total_env_steps=steps, seed=3)
    train(run_dir, PENDULUM, train_config=cfg, env_config=SHORT, quiet=True, make_env=make_env,
          resume=resume)  # fmt: skip
    return read_metrics(run_dir), torch.load(run_dir / "policy.pt", weights_only=False)


def _same_runs(a, b):
    """Two runs' metrics (clocks aside) and actor weights equal."""
    (rows_a, policy_a), (rows_b, policy_b) = a, b
    skip = {"wall_s", "steps_per_s", "collect_s", "learn_s"}  # clocks, not rollouts
    assert len(rows_a) == len(rows_b)
    for x, y in zip(rows_a, rows_b, strict=True):
        assert {k: v for k, v in x.items() if k not in skip} == pytest.approx(
            {k: v for k, v in y.items() if k not in skip}, nan_ok=True, rel=0, abs=0
        )
    assert policy_a["actor"].keys() == policy_b["actor"].keys()
    for k in policy_a["actor"]:
        assert torch.equal(policy_a["actor"][k], policy_b["actor"][k]), k


def test_training_with_two_workers_equals_the_local_run(tmp_path):
    local = _tiny_train(tmp_path / "local", None, steps=192)
    assert len(local[0]) == 3  # 192 steps / (4 envs x 16)
    _same_runs(local, _tiny_train(tmp_path / "ray", sharded_make_env(2), steps=192))
    # and 2 iterations, a checkpoint, 1 more over the workers: the same run again
    _tiny_train(tmp_path / "resumed", sharded_make_env(2), steps=128)
    resumed = _tiny_train(tmp_path / "resumed", sharded_make_env(2), steps=192, resume=True)
    _same_runs(local, resumed)
    # resumed without the workers: said so (was a traceback, then the wrong "start a new run")
    with pytest.raises(InputError, match="trained over 2 Ray workers: resume with --workers 2"):
        _tiny_train(tmp_path / "resumed", None, steps=256, resume=True)


def test_state_restores_every_shard_exactly():
    env = ShardedVecEnv(PENDULUM, 4, workers=2, seed=2, config=SHORT)
    try:
        env.reset(seed=2)
        rng = np.random.default_rng(0)
        for _ in range(10):
            env.step(rng.uniform(-1, 1, (4, 1)))
        state = pickle.loads(pickle.dumps(env.get_state()))  # as a checkpoint stores it
        actions = rng.uniform(-1, 1, (40, 4, 1))
        first = [env.step(a) for a in actions]
        env.set_state(state)
        for a, before in zip(actions, first, strict=True):
            _assert_same(env.step(a), before)
        three = {**state, "bounds": [(0, 2), (2, 3), (3, 4)], "shards": state["shards"] * 2}
        with pytest.raises(InputError, match="resume with --workers 3"):
            env.set_state(three)
        with pytest.raises(InputError, match="without --workers"):
            env.set_state(make_vec(PENDULUM, 4, config=SHORT).get_state())
    finally:
        env.close()


def test_traffic_per_step_is_the_actions_out_and_the_results_back():
    env = ShardedVecEnv(PENDULUM, 6, workers=2, seed=0, count_bytes=True)
    try:
        env.reset(seed=0)
        action = np.zeros((6, 1))
        result = env.step(action)
        sent, received = env.traffic["sent_bytes"], env.traffic["received_bytes"]
        # out: 6 float64 actions (48 bytes) plus two pickle headers of ~150 bytes
        assert 48 < sent < 48 + 2 * 200
        # back: at least every float32 observation once (final_obs is obs when none ended),
        # rewards, flags and the float64 infos
        payload = sum(v.nbytes for v in result.obs.values()) + result.reward.nbytes
        payload += sum(np.asarray(v).nbytes for v in result.info.values())
        assert payload < received < payload + 2 * 2000
    finally:
        env.close()


def test_close_stops_the_actors_and_keeps_a_shared_ray():
    env = ShardedVecEnv(PENDULUM, 2, workers=2, seed=0)
    actor = env.actors[0]
    env.close()
    # ray.kill is asynchronous: a call sent at once may still be served; within 30 s none is
    deadline = time.monotonic() + 30
    with pytest.raises(ray.exceptions.RayActorError):
        while time.monotonic() < deadline:
            ray.get(actor.spec.remote(), timeout=30)
            time.sleep(0.1)
    assert ray.is_initialized()  # this module's instance: not the environment's to stop
    env.close()  # twice is harmless


def test_shard_errors_are_one_line_input_errors():
    with pytest.raises(InputError, match="episode_s"):
        ShardedVecEnv(PENDULUM, 4, workers=2, config={"episode_s": -1.0})
    with pytest.raises(InputError, match="at most 2"):
        ShardedVecEnv(PENDULUM, 2, workers=3)


def _square(x: int) -> int:
    return x * x


def _bad_file() -> None:
    raise InputError("sweep.yaml", "seeds", "no such seed")


def test_jobs_run_as_ray_tasks_in_order_like_locally():
    jobs = [partial(_square, k) for k in range(5)]
    ended: list[tuple[int, int]] = []
    results = run_on_ray(jobs, workers=2, progress=lambda done, n: ended.append((done, n)))
    assert results == [job() for job in jobs] == [0, 1, 4, 9, 16]
    assert ended == [(k, 5) for k in range(1, 6)]  # one call as each job ends, on the driver
    with pytest.raises(InputError, match=r"sweep\.yaml: seeds: no such seed"):
        run_on_ray([_bad_file], workers=1)


def test_eval_grid_as_ray_tasks_equals_the_local_one(tmp_path):
    from sim2real.learn.evaluate import evaluate_runs

    _tiny_train(tmp_path / "run", None, steps=64)
    args = ([tmp_path / "run"], ["motor-lag", "identified-shifted"])
    local, _ = evaluate_runs(*args, episodes=3, seed=2)
    on_ray, _ = evaluate_runs(*args, episodes=3, seed=2, run_jobs=ray_runner(workers=2))
    ended: list = []
    side_by_side, _ = evaluate_runs(
        *args, episodes=3, seed=2, processes=2, progress=lambda *a: ended.append(a)
    )
    rows = [r.to_dict() for r in local[str(tmp_path / "run")]]
    assert [r["world"] for r in rows] == ["training conditions", "motor-lag", "identified-shifted"]
    assert [r.to_dict() for r in on_ray[str(tmp_path / "run")]] == rows
    assert [r.to_dict() for r in side_by_side[str(tmp_path / "run")]] == rows  # local processes
    assert ended[-1] == (9, 9, "3 of 3 cells evaluated")  # the grid whole at its end
    # a cell whose parent took a Ctrl-C stops at its next step, not at its last episode
    from sim2real.core.stop_request import StoppedError
    from sim2real.learn.evaluate import evaluate_policy
    from sim2real.learn.policy import load_policy

    asked = iter([False, False, True])
    with pytest.raises(StoppedError, match="stopped"):
        evaluate_policy(
            load_policy(tmp_path / "run"), [], episodes=3, should_stop=lambda: next(asked)
        )
    # the command: the cells counted on the driver as they end (piped: its last line)
    from cli_helpers import run_cli  # here: Ray's workers import this module without tests/

    proc = run_cli("policy", "eval", tmp_path / "run", "--reality", "motor-lag", "--episodes", 2,
                   "--workers", 2)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "motor-lag: success" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("evaluate 100%") and last.endswith("2 of 2 cells evaluated"), last


def test_seed_sweep_on_ray_counts_the_seeds_on_the_driver(tmp_path):
    """`policy train --seeds --workers`: each seed a Ray task; the seeds' own progress lines
    stay in the workers' logs, the command says how many seeds have ended."""
    from cli_helpers import run_cli

    settings = tmp_path / "small.yaml"
    settings.write_text("num_envs: 8\nsteps_per_env: 32\n")
    proc = run_cli("policy", "train", PENDULUM, "--settings", settings, "--steps", 256,
                   "--seeds", "0-1", "--workers", 2, "--out", tmp_path / "sweep")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "sweep" / "seed-1" / "policy.pt").is_file()
    assert "best: seed" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("seeds 100%") and last.endswith("2 of 2 trained"), proc.stderr
    assert "seed 0: train" not in proc.stderr  # a seed's own lines: in its worker's log
