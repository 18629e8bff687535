"""PPO's update of one rollout beside the collection of the next (the training setting
``overlap_update``). On two cores the update (matrix products) and the environment (MuJoCo's
rollout, released from the GIL) then run at once instead of one after the other.

Each rollout is collected by a copy of the policy taken before the update that runs beside it,
so the learner is one update ahead of the policy that acted: a lag of one iteration, as in
asynchronous PPO (APPO). The rollout stores what the acting policy did (its log-probabilities,
means, stds and values), so PPO's clipped ratio and KL are taken against that policy.
Deterministic: the two threads share no tensor and no random generator (the update draws its
minibatches from a generator of its own), and a checkpoint holds the rollout not yet learned
from, so a resumed run continues exactly.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from sim2real.learn.ppo import PPO, ActorCritic, RolloutStorage, update_normalizers

UPDATE_SEED_OFFSET = 7919
"""The update's minibatch generator is seeded with the run's seed plus this (a stream apart
from the collection's)."""


class OverlappedIterations:
    """PPO iterations with the update of rollout k beside the collection of rollout k + 1."""

    def __init__(
        self, model: ActorCritic, ppo: PPO, storages: tuple[RolloutStorage, RolloutStorage],
        seed: int, torch_threads: int,
    ) -> None:  # fmt: skip
        self.model, self.ppo, self.torch_threads = model, ppo, torch_threads
        self.acting = copy.deepcopy(model)  # the policy that collects, one update behind
        self.pending: RolloutStorage | None = None  # collected, not learned from yet
        self.pending_slot, self.spare = storages
        self.generator = torch.Generator().manual_seed(seed + UPDATE_SEED_OFFSET)

    def iteration(
        self, collect: Callable[[ActorCritic, RolloutStorage], None], progress: float
    ) -> tuple[dict[str, float], RolloutStorage, float, float]:
        """Learns from the pending rollout while ``collect(policy, storage)`` fills the next
        (a run's first call collects one before). Returns the losses, the rollout just
        collected, and the seconds of the collection and of the update."""
        if self.pending is None:
            collect(self.model, self.pending_slot)
            self.pending = self.pending_slot
        self.acting.load_state_dict(self.model.state_dict())
        learned, fresh = self.pending, self.spare
        out: dict[str, Any] = {}
        worker = threading.Thread(target=self._learn, args=(learned, progress, out))
        worker.start()
        t0 = time.perf_counter()
        try:
            collect(self.acting, fresh)
        finally:
            collect_s = time.perf_counter() - t0
            worker.join()
        if "error" in out:
            raise out["error"]
        self.pending, self.spare = fresh, learned
        return out["losses"], fresh, collect_s, out["seconds"]

    def _learn(self, storage: RolloutStorage, progress: float, out: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        try:
            torch.set_num_threads(self.torch_threads)  # a new thread may not inherit it
            out["losses"] = self.ppo.update(storage, self.generator, progress=progress)
            update_normalizers(self.model, storage)
        except BaseException as exc:  # raised again in the caller's thread
            out["error"] = exc
        out["seconds"] = time.perf_counter() - t0

    def state(self) -> dict[str, Any]:
        pending = None if self.pending is None else self.pending.state_dict()
        return {"pending": pending, "generator": self.generator.get_state()}

    def load_state(self, state: dict[str, Any] | None) -> None:
        """A checkpoint's :meth:`state` (None: a run saved without overlap; collect afresh)."""
        if state is None:
            return
        self.generator.set_state(state["generator"])
        if state["pending"] is not None:
            self.pending_slot.load_state_dict(state["pending"])
            self.pending = self.pending_slot
