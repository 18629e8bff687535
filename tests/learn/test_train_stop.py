"""Ctrl-C during a training: it stops at the end of the iteration with its state saved, and
`--resume` continues exactly; a sweep's workers stop too and queued seeds are not begun."""

from __future__ import annotations

import os
import signal
import threading
import time
from functools import partial

import numpy as np
import pytest
import torch
from learn.test_train_resume import _config, _curve, _learned_state
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.core.errors import InputError
from sim2real.core.local_jobs import local_runner
from sim2real.core.stop_request import StoppedError, stop_requested
from sim2real.learn.train import TRAIN_STATE_FILE, read_metrics, train


def _ctrl_c_at_step(*steps: int):
    """Environments that get a Ctrl-C (SIGINT to this process) at each of their ``steps``."""

    def make(*args, **kw):
        env = make_toy_vec(*args, **kw)
        inner, count = env.step, [0]

        def stepped(action):
            count[0] += 1
            if count[0] in steps:
                os.kill(os.getpid(), signal.SIGINT)
            return inner(action)

        env.step = stepped
        return env

    return make


def test_ctrl_c_stops_at_the_end_of_the_iteration_saved_and_resume_continues_exactly(
    tmp_path, python_sigint
):
    config = _config(4)  # 16 steps an iteration, a checkpoint every 2
    straight = tmp_path / "straight"
    train(straight, TOY_ENV_ID, train_config=config, make_env=make_toy_vec, quiet=True)
    stopped = tmp_path / "stopped"
    with pytest.raises(StoppedError, match="iteration 3 of 4"):  # Ctrl-C in iteration 3
        train(stopped, TOY_ENV_ID, train_config=config, make_env=_ctrl_c_at_step(40), quiet=True)
    state = torch.load(stopped / TRAIN_STATE_FILE, weights_only=False)
    assert state["iteration"] == 3 and len(read_metrics(stopped)) == 3  # not the checkpoint at 2
    assert signal.getsignal(signal.SIGINT) is python_sigint
    train(stopped, TOY_ENV_ID, resume=True, make_env=make_toy_vec, quiet=True)
    a, b = _learned_state(straight), _learned_state(stopped)
    assert all(torch.equal(a[k], b[k]) for k in a)
    np.testing.assert_array_equal(_curve(straight), _curve(stopped))


def test_a_second_ctrl_c_interrupts_at_once_and_the_last_checkpoint_stays(tmp_path, python_sigint):
    run = tmp_path / "run"
    with pytest.raises(StoppedError, match=r"iteration 3 .*iteration 2's checkpoint stays"):
        train(run, TOY_ENV_ID, train_config=_config(4), make_env=_ctrl_c_at_step(40, 41),
              quiet=True)  # fmt: skip
    assert torch.load(run / TRAIN_STATE_FILE, weights_only=False)["iteration"] == 2
    assert signal.getsignal(signal.SIGINT) is python_sigint


def _until_stopped(folder, k: int) -> int:
    (folder / f"begun-{k}").touch()
    deadline = time.monotonic() + 30
    while not stop_requested() and time.monotonic() < deadline:
        time.sleep(0.02)
    (folder / f"{'stopped' if stop_requested() else 'deadline'}-{k}").touch()
    return k


def test_a_ctrl_c_stops_the_workers_jobs_and_begins_no_queued_one(tmp_path, python_sigint):
    jobs = [partial(_until_stopped, tmp_path, k) for k in range(3)]  # 2 workers: one queued

    def ctrl_c_once_both_run():  # a fixed delay would race a loaded machine's worker start
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(
            (tmp_path / f"begun-{k}").exists() for k in (0, 1)
        ):
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c_once_both_run, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        local_runner(2)(jobs)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "begun-0", "begun-1", "stopped-0", "stopped-1"
    ]  # fmt: skip


def test_a_stopped_sweep_says_the_same_command_continues(tmp_path):
    from sim2real.learn.reality_sets import reality_sets
    from sim2real.learn.seeds import train_seeds
    from sim2real.learn.train import TrainConfig

    def stopped(jobs):
        raise KeyboardInterrupt

    kw = {"train_config": TrainConfig(total_env_steps=8 * 16, num_envs=8, steps_per_env=16)}
    env_id = "sim2real/PendulumSwingup-v0"
    with pytest.raises(StoppedError, match="the same command continues every seed"):
        train_seeds(tmp_path, env_id, [0, 1], train_kw=kw,
                    validation=reality_sets(env_id).validation, run_jobs=stopped)  # fmt: skip


def _fails_once_begun(folder, k: int, other: int) -> int:
    """Fails once job ``other`` runs (else it might fail before the other has begun)."""
    deadline = time.monotonic() + 30
    while not (folder / f"begun-{other}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    raise InputError("seed.yaml", "seed", f"seed {k} cannot train")


def test_a_failing_job_stops_the_others_at_once(tmp_path):
    jobs = [partial(_fails_once_begun, tmp_path, 0, 1), partial(_until_stopped, tmp_path, 1)]
    with pytest.raises(InputError, match="seed 0 cannot train"):
        local_runner(2)(jobs)
    assert (tmp_path / "stopped-1").exists()  # it saw the stop (not its 30 s deadline)
