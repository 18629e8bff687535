"""A run whose saved environments do not fit the ones resuming it (older code, another
--workers layout) stops with one line naming the state file, not a KeyError."""

import pytest
import torch

from sim2real.core.errors import InputError
from sim2real.learn.run_folder import TRAIN_STATE_FILE
from sim2real.learn.train import TrainConfig, train

ENV = "sim2real/PendulumSwingup-v0"


@pytest.mark.parametrize("damage", ["missing field", "other batch"])
def test_resume_refuses_environments_of_another_layout(tmp_path, damage):
    cfg = TrainConfig(total_env_steps=4 * 16, num_envs=4, steps_per_env=16)
    train(tmp_path, ENV, train_config=cfg, quiet=True)
    path = tmp_path / TRAIN_STATE_FILE
    state = torch.load(path, weights_only=False)
    if damage == "missing field":
        del state["env_state"]["values"]
    else:
        state["env_state"]["env_offset"] = 2  # a shard's state, not the whole batch's
    torch.save(state, path)
    longer = cfg.model_copy(update={"total_env_steps": 4 * 16 * 2})
    with pytest.raises(InputError, match="start a new run") as err:
        train(tmp_path, ENV, train_config=longer, resume=True, quiet=True)
    assert err.value.field == "env_state" and str(err.value.source).endswith(TRAIN_STATE_FILE)
