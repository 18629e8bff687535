"""Teacher-student distillation side by side: our DAgger (``sim2real.learn.distill``) against
rsl_rl's ``Distillation`` (rsl-rl-lib, ETH's; the peer the issue names), same teacher, same
environments, same environment-step budget, same student network, same evaluation.

python benchmarks/bench_distill.py --teacher RUN [--seeds 0 1 2] [--out results.json]

RUN is a privileged teacher (``sim2real policy train ENV --teacher --out RUN``). rsl-rl-lib is
not a dependency of sim2real: this benchmark needs it installed (``pip install rsl-rl-lib``)
and says so otherwise. Both students read the deployable ``policy`` group; both are evaluated
deterministically by ``distill.run_episodes`` on the same evaluation batch (the task's own
episode starts, the teacher's randomization, seed + 1), beside the teacher.

rsl_rl's algorithm as its authors ship it: the student acts with its own Gaussian noise from
the first step (no teacher mixing), the teacher labels every visited state, and each update
regresses on that iteration's rollout only (no aggregation), a gradient step every
``gradient_length`` time steps (``--rsl-epochs`` passes); obs normalization on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from sim2real.learn.distill import DistillConfig, distill, run_episodes
from sim2real.learn.evaluate import task_config
from sim2real.learn.policy import load_policy
from sim2real.learn.train import default_make_env
from sim2real.learn.vec import concat_obs


def rsl_distill(teacher_run: Path, cfg: DistillConfig, epochs: int, gradient_length: int):
    """rsl_rl's Distillation on our batch environment; (student act function, wall s)."""
    from rsl_rl.algorithms import Distillation
    from rsl_rl.models import MLPModel
    from rsl_rl.storage import RolloutStorage
    from tensordict import TensorDict

    teacher = load_policy(teacher_run)
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    env = default_make_env(
        teacher.env_id, cfg.num_envs, seed=cfg.seed, dr=teacher.dr, config=teacher.env_config
    )

    def tensordict(obs: dict[str, np.ndarray]) -> TensorDict:
        groups = {
            "student": torch.from_numpy(concat_obs(obs, tuple(cfg.student_actor))),
            "teacher": torch.from_numpy(concat_obs(obs, teacher.roles.actor)),
        }
        return TensorDict(groups, batch_size=[cfg.num_envs])

    class Teacher(torch.nn.Module):
        """Our teacher's deterministic action, clipped as the environment clips it."""

        def forward(self, obs: TensorDict) -> torch.Tensor:
            return teacher.actor(obs["teacher"]).clamp(-1.0, 1.0)

        def reset(self, dones=None, hidden_state=None) -> None:
            pass

        def get_hidden_state(self):
            return None

    net = cfg.net or teacher.meta.net
    start = time.perf_counter()
    obs = tensordict(env.reset(seed=cfg.seed))
    student = MLPModel(
        obs, {"student": ["student"]}, "student", env.action_dim,
        hidden_dims=list(net.actor_hidden), activation=net.activation, obs_normalization=True,
        distribution_cfg={"class_name": "GaussianDistribution", "init_std": 0.1},
    )  # fmt: skip
    storage = RolloutStorage(
        "distillation", cfg.num_envs, cfg.steps_per_round, obs, [env.action_dim]
    )
    alg = Distillation(
        student, Teacher(), storage, num_learning_epochs=epochs,
        gradient_length=gradient_length, learning_rate=cfg.learning_rate, max_grad_norm=1.0,
    )  # fmt: skip
    for _ in range(cfg.rounds):
        with torch.inference_mode():
            for _ in range(cfg.steps_per_round):
                action = alg.act(obs)
                result = env.step(action.clamp(-1.0, 1.0).numpy().astype(np.float64))
                obs = tensordict(result.obs)
                done = torch.from_numpy(result.terminated | result.truncated)
                alg.process_env_step(obs, torch.as_tensor(result.reward), done, {})
        alg.update()
    wall = time.perf_counter() - start

    def act(o: dict[str, np.ndarray]) -> np.ndarray:
        x = torch.from_numpy(concat_obs(o, tuple(cfg.student_actor)))
        with torch.no_grad():
            y = student.mlp(student.obs_normalizer(x))
            mean = student.distribution.as_deterministic_output_module()(y)
        return mean.clamp(-1.0, 1.0).numpy().astype(np.float64)

    return act, wall


def evaluate(teacher_run: Path, cfg: DistillConfig, act) -> tuple[float, float]:
    teacher = load_policy(teacher_run)
    env = default_make_env(
        teacher.env_id, cfg.eval_episodes, seed=cfg.seed + 1, dr=teacher.dr,
        config=task_config(teacher.env_config),
    )  # fmt: skip
    stats = run_episodes(env, act, cfg.seed + 1)
    return stats.success_rate, stats.mean_return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--rsl-variants", nargs="+", default=["1x20", "4x20", "4x1", "16x1"],
        help="rsl_rl settings EPOCHSxGRADIENT_LENGTH (1x20: its recipe; x1: a step per time step)",
    )  # fmt: skip
    parser.add_argument("--skip-ours", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    try:
        import rsl_rl  # noqa: F401
    except ImportError:
        sys.exit("bench_distill needs rsl-rl-lib: pip install rsl-rl-lib")
    teacher = load_policy(args.teacher)
    rows = []
    for seed in args.seeds:
        cfg = DistillConfig(seed=seed)
        if not args.skip_ours:
            with tempfile.TemporaryDirectory() as tmp:
                ours = distill(args.teacher, Path(tmp) / "student", cfg, quiet=True)
            rows.append({"learner": "ours (DAgger)", "seed": seed, "wall_s": ours.wall_s,
                         "success": ours.student_success, "return": ours.student_return})  # fmt: skip
            print(rows[-1], flush=True)
        for variant in args.rsl_variants:
            epochs, gradient_length = (int(x) for x in variant.split("x"))
            act, wall = rsl_distill(args.teacher, cfg, epochs, gradient_length)
            success, ret = evaluate(args.teacher, cfg, act)
            name = f"rsl_rl Distillation, {epochs} epoch(s), gradient every {gradient_length}"
            rows.append({"learner": name, "seed": seed, "wall_s": wall, "success": success,
                         "return": ret})  # fmt: skip
            print(rows[-1], flush=True)
        teacher_success, _ = evaluate(args.teacher, cfg, teacher.act)
        rows.append({"learner": "teacher (privileged)", "seed": seed, "wall_s": 0.0,
                     "success": teacher_success, "return": _})  # fmt: skip
    budget = DistillConfig().rounds * DistillConfig().steps_per_round * DistillConfig().num_envs
    print(f"\n{teacher.env_id}, teacher {args.teacher}, {budget} environment steps per student")
    print("| learner | success per seed | median return | wall [s] (median) |")
    print("| --- | --- | --- | --- |")
    for name in dict.fromkeys(r["learner"] for r in rows):
        mine = [r for r in rows if r["learner"] == name]
        succ = " / ".join(f"{100 * r['success']:.0f}" for r in mine)
        print(f"| {name} | {succ} % | {statistics.median(r['return'] for r in mine):.1f} | "
              f"{statistics.median(r['wall_s'] for r in mine):.0f} |")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
