"""A curriculum in the training settings: ``stages`` of other training conditions before the
settings' own, run one after another in one run folder.

    total_env_steps: 14000000
    stages:
      - until_env_steps: 3000000
        dr_terms: {friction: {range: [0.0, 0.0]}}   # the run's randomization, this term changed
        training_env: {init_goal_share: 1.0}         # over the settings' training_env
      - until_env_steps: 6000000
        training_env: {init_goal_share: 1.0}

Each stage is a resume of the run on its conditions (``train(..., new_conditions=...)``): the
weights, optimizer, normalizers and environments carry over, and the run's ``stages`` record
where each began. A new run writes its plan, every stage's resolved randomization and
environment config, to ``RUN/curriculum.yaml`` (a stage's changed randomization to
``RUN/stages/``), so a stopped run resumes into the stage it was in and on to the end.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.yaml_io import read_yaml
from sim2real.learn.run_folder import TRAIN_STATE_FILE, TrainResult, load_train_state
from sim2real.learn.train_config import TrainConfig, merge_env_config

PLAN_FILE = "curriculum.yaml"
STAGE_DR_DIR = "stages"


def is_curriculum_run(run_dir: str | Path) -> bool:
    return (Path(run_dir) / PLAN_FILE).is_file()


def _stage_dr(k: int, env_id: str, dr: Any, dr_terms: dict) -> Any:
    """The run's randomization ``dr`` with ``dr_terms`` replaced by term name (a
    Randomization, written to the run folder once every stage is checked), or ``dr`` itself
    when nothing is replaced."""
    if not dr_terms:
        return dr
    from sim2real.learn.envs import task
    from sim2real.learn.randomization import load_randomization, randomization_from_dict

    data = load_randomization(dr, task(env_id).default_dr).model_dump(mode="json")
    names = [t["name"] for t in data["terms"]]
    for name, fields in dr_terms.items():
        if name not in names:
            have = ", ".join(names) or "none"
            why = f"the run's randomization has no term {name!r} (its terms: {have})"
            raise InputError("training settings", f"stages[{k}].dr_terms", why)
        data["terms"][names.index(name)].update(fields)
    try:  # the replaced fields must make a valid term
        return randomization_from_dict(data, f"stage {k}")
    except InputError as err:
        raise InputError("training settings", f"stages[{k}].dr_terms", err.message) from None


def _write_stage_drs(run_dir: Path, plan: list[dict[str, Any]]) -> None:
    """Each stage's own randomization to ``RUN/stages/stage-<k>.dr.yaml``, its path in the plan
    (a run says where its randomization came from)."""
    from sim2real.learn.randomization import Randomization

    for k, st in enumerate(plan):
        if isinstance(st["dr"], Randomization):
            path = run_dir / STAGE_DR_DIR / f"stage-{k}.dr.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            data = st["dr"].model_dump(mode="json")
            write_text_atomic(path, yaml.safe_dump(data, sort_keys=False))
            st["dr"] = str(path)


def plan_stages(
    env_id: str, cfg: TrainConfig, dr: Any, env_config: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every stage's ``until_env_steps``, ``dr`` and ``env_config`` (the stage's
    ``training_env`` under the given environment config), the settings' own last."""
    ends = [s.until_env_steps for s in cfg.stages] + [cfg.total_env_steps]
    if ends[-1] <= ends[-2] and all(b > a for a, b in pairwise(ends[:-1])):
        why = (f"{ends[-1]} steps end within the settings' stages (they run to {ends[-2]}): "
               "give more steps (--steps) or settings without stages")  # fmt: skip
        raise InputError("training settings", "total_env_steps", why)
    if any(b <= a for a, b in pairwise(ends)):
        why = f"stages must end at rising step counts below total_env_steps, got {ends}"
        raise InputError("training settings", "stages", why)
    plan = []
    for k, st in enumerate(cfg.stages):
        plan.append({
            "until_env_steps": st.until_env_steps,
            "dr": _stage_dr(k, env_id, dr, st.dr_terms),
            "env_config": merge_env_config(st.training_env, env_config),
        })  # fmt: skip
    plan.append({"until_env_steps": cfg.total_env_steps, "dr": dr, "env_config": env_config})
    return plan


def _read_plan(path: Path) -> list[dict[str, Any]]:
    """A run's stored plan (what :func:`plan_stages` wrote); InputError naming the file when
    it is not a list of stages with ``until_env_steps``, ``dr`` and ``env_config``."""
    plan = read_yaml(path, "curriculum plan")
    keys = {"until_env_steps", "dr", "env_config"}
    if not isinstance(plan, list) or not plan:
        raise InputError(path, None, "expected a non-empty list of stages")
    for k, st in enumerate(plan):
        if not isinstance(st, dict) or not keys <= st.keys():
            raise InputError(path, f"[{k}]", f"a stage needs {', '.join(sorted(keys))}")
    return plan


def _check_layouts(plan: list[dict], env_id: str, cfg: TrainConfig, make_env) -> None:
    """Every stage's environment builds and observes what the settings' own does (a stage
    cannot change the policy's inputs), checked before the first stage trains."""
    if make_env is None:
        from sim2real.learn.envs import make_vec as make_env
    from sim2real.learn.vec import close_env

    def layout(st: dict) -> dict[str, int]:
        config = merge_env_config(cfg.training_env, st["env_config"])
        env = make_env(env_id, 1, seed=0, dr=st["dr"], config=config)
        dims = {name: group.dim for name, group in env.obs_groups.items()}
        close_env(env)
        return dims

    own = layout(plan[-1])
    for k, st in enumerate(plan[:-1]):
        try:
            dims = layout(st)
        except InputError as err:  # the stage's own randomization or environment: say so
            where = (
                f"stages[{k}].dr_terms" if err.field and "terms" in err.field else f"stages[{k}]"
            )
            raise InputError("training settings", where, f"{err.field}: {err.message}") from None
        if dims != own:
            why = "changes what the policy observes (a history, an aid): give it to every stage"
            raise InputError(
                "training settings", f"stages[{k}]", why + " and the settings' training_env"
            )


def train_curriculum(
    train_stage: Callable[..., TrainResult],
    run_dir: str | Path,
    env_id: str,
    *,
    dr: Any,
    env_config: Any,
    train_config: TrainConfig | None,
    resume: bool,
    **kw: Any,
) -> TrainResult:
    """Run (or resume) the stages of ``train_config.stages`` (a new run) or of the run's
    plan (``resume``; ``train_config`` then only extends the last stage's total) with
    ``train_stage`` (:func:`sim2real.learn.train.train`'s one-stage body)."""
    run_dir = Path(run_dir)
    if resume:
        state = load_train_state(run_dir, env_id)
        cfg = TrainConfig(**state["train_config"])
        plan = _read_plan(run_dir / PLAN_FILE)
        if train_config is not None:
            plan[-1]["until_env_steps"] = train_config.total_env_steps
        done = int(state["env_steps"])
    else:  # dr and env_config as a run stores them (train's): text, plain fields
        cfg = train_config
        plan = plan_stages(env_id, cfg, dr, env_config or {})
        _check_layouts(plan, env_id, cfg, kw.get("make_env"))
        done = 0
    run_dir.mkdir(parents=True, exist_ok=True)
    _write_stage_drs(run_dir, plan)
    write_text_atomic(run_dir / PLAN_FILE, yaml.safe_dump(plan, sort_keys=False))
    result = None
    for k, st in enumerate(plan):
        if done >= st["until_env_steps"] and k < len(plan) - 1:
            continue  # a stage already run
        stage_cfg = cfg.model_copy(update={"total_env_steps": st["until_env_steps"]})
        conditions = {"dr": st["dr"], "env_config": st["env_config"]}
        if (run_dir / TRAIN_STATE_FILE).is_file():
            result = train_stage(run_dir, env_id, dr=None, env_config=None,
                                 train_config=stage_cfg, resume=True, new_conditions=conditions,
                                 **kw)  # fmt: skip
        else:
            result = train_stage(run_dir, env_id, **conditions, train_config=stage_cfg,
                                 resume=False, new_conditions=None, **kw)  # fmt: skip
        done = result.env_steps
    return result
