"""``sim2real policy ...``: train a controller in simulation (PPO with domain randomization),
distill a privileged teacher into a deployable student, evaluate in other realities, export
for the robot (thin shells over :mod:`sim2real.learn`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sim2real.core.seed_range import MAX_SEED

app = typer.Typer(
    help="Policies trained in simulation, distilled, exported and evaluated across realities.",
    no_args_is_help=True,
)

AddressOption = Annotated[
    str | None,
    typer.Option("--address", help="HOST:PORT of an existing Ray cluster's head (or auto)."),
]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]


def _ray_jobs(address: str | None, workers: int | None, progress, what: str):
    """A Ray job runner reporting ``progress`` (``share_progress``'s) as jobs end."""
    from sim2real.core.ray_jobs import ray_runner

    report = progress and (lambda done, total: progress(done, total, f"{done} of {total} {what}"))
    return ray_runner(address, workers=workers or 1, progress=report)


def _dr_arg(dr: str | None) -> str | Path | None:
    if dr is None:
        return "default"
    if dr.lower() == "none":
        return None
    return Path(dr).absolute()  # the run records where it was: a later eval runs elsewhere


def _given(**options: Any) -> dict[str, Any]:
    """The options given on the command line (not None), as config field updates."""
    return {k: v for k, v in options.items() if v is not None}


def _yaml_mapping(path: Path | None, what: str) -> dict[str, Any]:
    from sim2real.core.errors import InputError
    from sim2real.core.yaml_io import read_yaml

    if path is None:
        return {}
    data = read_yaml(path, what) or {}
    if not isinstance(data, dict):
        raise InputError(path, None, f"expected a mapping of {what} fields")
    return data


def _env_config_fields(path: Path | None) -> dict[str, Any]:
    """``--env-config``'s fields, a ``model`` file found beside the config (as a reality's is)
    or else from the working folder, recorded absolute: a later eval runs elsewhere."""
    fields = _yaml_mapping(path, "environment config")
    model = fields.get("model")
    if path is not None and isinstance(model, str):
        for candidate in (path.parent / model, Path(model)):
            if candidate.is_file():
                fields["model"] = str(candidate.absolute())
                break
    return fields


@app.command("train")
def train_cmd(
    env: Annotated[str, typer.Argument(help="Environment id, e.g. sim2real/PendulumSwingup-v0.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder to write (or resume).")],
    dr: Annotated[
        str | None,
        typer.Option(
            "--dr",
            help="Randomization YAML (terms, or a sysid dr.yaml); 'none' for none. "
            "Default: the environment's own.",
        ),
    ] = None,
    steps: Annotated[
        int | None, typer.Option("--steps", min=1, help="Environment steps in all.")
    ] = None,
    settings: Annotated[
        Path | None,
        typer.Option(
            "--settings",
            help="Training settings YAML (PPO, network): what it names, over the task's own.",
        ),
    ] = None,
    env_config: Annotated[
        Path | None,
        typer.Option("--env-config", help="Environment fields YAML (model, actuator, params)."),
    ] = None,
    teacher: Annotated[
        bool,
        typer.Option(
            "--teacher",
            help="Privileged teacher: its actor also reads the "
            "randomized parameters (distill it before export).",
        ),
    ] = False,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the run (0 to 2^32 - 1)."),
    ] = None,
    torch_threads: Annotated[
        int | None,
        typer.Option(
            "--torch-threads",
            min=1,
            help="torch threads of each training (the settings': 1). A lone run on idle "
            "cores: 2 cut the update by a third here; --seeds runs cores / N side by side.",
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            help="Several seeds (0-4, 1,3,7): each into OUT/seed-<k>, the best on the "
            "task's validation worlds kept as OUT/best (a stopped sweep continues).",
        ),
    ] = None,
    validation: Annotated[
        list[str] | None,
        typer.Option(
            "--validation", help="With --seeds: worlds that choose (default: the task's)."
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in OUT (with --seeds: every seed's) where it stopped, to its "
            "own total (--steps: to that); with --dr / --env-config on those from here on (a "
            "curriculum's next stage).",
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Step the environments in N Ray actors (needs ray: the cluster extra); with "
            "--seeds: the seeds as Ray tasks. A local Ray instance unless --address.",
        ),
    ] = None,
    address: AddressOption = None,
    quiet: QuietOption = False,
) -> None:
    """Train a policy for ENV with PPO into OUT (policy.pt, metrics.csv, tb/, checkpoints).
    The default policy reads only what the robot measures, so it can be exported."""
    from sim2real.core.atomic import check_writable
    from sim2real.core.errors import InputError
    from sim2real.learn.dr_notes import no_terms_note
    from sim2real.learn.envs import check_env_builds
    from sim2real.learn.envs import env_config as check_env_config
    from sim2real.learn.train import default_train_config, load_train_config, train
    from sim2real.learn.train_config import merge_env_config
    from sim2real.learn.vec import ObsRoles

    ignored = {
        "--settings": settings, "--seed": seed, "--teacher": teacher or None,
        "--torch-threads": torch_threads,
    }  # fmt: skip
    ignored = [flag for flag, value in ignored.items() if value is not None]
    if resume and ignored:  # the run keeps its own: say so rather than drop them
        why = f"a resumed run keeps its own settings; {', '.join(ignored)} cannot change them"
        raise InputError("--resume", None, why + " (--steps extends, --dr / --env-config stage)")
    check_writable(out, "--out", folder=True)
    cfg = load_train_config(settings, env) if settings else default_train_config(env)
    given = _given(total_env_steps=steps, seed=seed, torch_threads=torch_threads)
    cfg = cfg.model_copy(update=given)
    fields = _env_config_fields(env_config)
    check_env_builds(env, fields, env_config or "--env-config", _dr_arg(dr))
    if (note := no_terms_note(_dr_arg(dr))) is not None:
        typer.echo(note)
    stages = [("training_env", {})] + [
        (f"stages[{k}].training_env", st.training_env) for k, st in enumerate(cfg.stages)
    ]
    for where, stage_env in stages:
        try:
            check_env_config(
                env, merge_env_config(cfg.training_env, stage_env), settings or "training settings"
            )
        except InputError as err:
            field = ".".join(p for p in (where, err.field) if p)
            raise InputError(err.source, field, err.message) from None
    roles = ObsRoles(actor=("policy", "privileged")) if teacher else ObsRoles()
    kw = {"dr": _dr_arg(dr), "env_config": fields, "train_config": cfg, "roles": roles}
    new = {"dr": _dr_arg(dr)} if dr is not None else {}
    if env_config is not None:
        new["env_config"] = fields
    new_conditions = new if resume and new else None  # a curriculum's next stage
    on_ray = workers is not None or address is not None
    if on_ray and seeds is None:
        from sim2real.learn.distributed.sharded import sharded_make_env

        kw["make_env"] = sharded_make_env(workers or 1, address)
    if seeds is not None:
        from sim2real.cli.progress import share_progress
        from sim2real.learn.reality_sets import reality_sets
        from sim2real.learn.seeds import parse_seeds, train_seeds

        if seed is not None:
            raise InputError("--seeds", None, "give --seeds or --seed, not both")
        # on Ray each seed's own lines stay in its worker's log: here, the seeds as they end
        with share_progress(quiet or not on_ray, "seeds") as progress:
            sweep = train_seeds(
                out, env, parse_seeds(seeds), train_kw=kw,
                validation=validation or reality_sets(env).validation,
                new_conditions=new_conditions, own_totals=resume and steps is None, quiet=quiet,
                **({"run_jobs": _ray_jobs(address, workers, progress, "trained")} if on_ray else {}),
            )  # fmt: skip
        for line in sweep.lines():
            typer.echo(line)
        return
    if new_conditions:
        typer.echo(f"resuming on new conditions: {', '.join(new)} replaced from here on")
    if resume and steps is None:
        kw["train_config"] = None  # the run's own total, not the shipped settings'
    result = train(out, env, **kw, resume=resume, new_conditions=new_conditions, quiet=quiet)
    typer.echo(result.summary())
    typer.echo(f"run: {out}")


@app.command("distill")
def distill_cmd(
    teacher: Annotated[Path, typer.Argument(help="Run folder of a privileged teacher.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder of the student.")],
    rounds: Annotated[
        int | None, typer.Option("--rounds", min=1, help="DAgger collect-and-train rounds.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Seed (>= 0).")] = None,
    quiet: QuietOption = False,
) -> None:
    """Distill TEACHER into a deployable student (DAgger on the student's own rollouts)."""
    from sim2real.learn.distill import DistillConfig, distill

    result = distill(teacher, out, DistillConfig(**_given(rounds=rounds, seed=seed)), quiet=quiet)
    typer.echo(result.summary())
    typer.echo(f"run: {out}")


@app.command("export")
def export_cmd(
    run: Annotated[Path, typer.Argument(help="Run folder of a deployable policy.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for policy.onnx and policy.json.")],
) -> None:
    """Write policy.onnx (input obs [1, D], output action [1, A] in [-1, 1]) and policy.json
    (env, control_dt, action_limit, history, obs_terms) for the robot-side runner."""
    from sim2real.core.atomic import check_writable
    from sim2real.learn.export import export_policy

    check_writable(out, "--out", folder=True)
    result = export_policy(run, out)
    typer.echo(f"exported: {result.onnx_path} and {result.json_path}")


@app.command("replay")
def replay_cmd(
    deployed: Annotated[Path, typer.Argument(help="An exported policy (policy export's --out).")],
    log: Annotated[Path, typer.Option("--log", help="A real log of the robot (CSV or JSON).")],
    mapping: Annotated[
        Path | None,
        typer.Option("--mapping", help="Column mapping YAML (default: the robot's built-in)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="CSV of the states and both torques.")
    ] = None,
) -> None:
    """Run an exported policy on a real log's measured states (offline, no closed loop): the
    torques it would command there, beside the log's own."""
    from sim2real.core.atomic import check_writable
    from sim2real.learn.replay import replay_log

    if out is not None:
        check_writable(out, "--out")
    replay = replay_log(deployed, log, mapping)
    if out is not None:
        replay.write_csv(out)
    for line in replay.summary_lines():
        typer.echo(line)
    if out is not None:
        typer.echo(f"wrote {out}")


@app.command("eval")
def eval_cmd(
    policies: Annotated[list[Path], typer.Argument(help="Run folder(s) of trained policies.")],
    env: Annotated[
        str | None, typer.Option("--env", help="Environment id the policies must be for.")
    ] = None,
    reality: Annotated[
        list[str] | None,
        typer.Option("--reality", help="Reality YAML(s) or shipped reality names."),
    ] = None,
    episodes: Annotated[int, typer.Option("--episodes", min=1, help="Episodes per world.")] = 100,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the evaluation worlds (>= 0).")
    ] = 1,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Folder for an HTML report (table, training curves)."),
    ] = None,
    realaigym: Annotated[
        bool,
        typer.Option(
            "--realaigym",
            help="RealAIGym's protocol instead: 60 s episodes with random pushes, scored by "
            "the share of the time the tip is above the line (--episodes per world).",
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Each policy-world cell as a Ray task (needs ray: the cluster extra); a local "
            "Ray instance of N CPUs unless --address.",
        ),
    ] = None,
    address: AddressOption = None,
    quiet: QuietOption = False,
) -> None:
    """Success rate and return of each policy in its training conditions and in each reality
    (default: the task's evaluation worlds); with several policies, the ablation table. The
    cells (a policy in a world) run side by side, one process per core (Ray tasks with
    --workers), each seeded alike: the figures do not depend on where they ran."""
    from sim2real.cli.progress import share_progress
    from sim2real.core.cores import usable_cores
    from sim2real.learn.evaluate import evaluate_runs
    from sim2real.learn.reality import shipped_realities

    if realaigym:
        from sim2real.core.errors import InputError
        from sim2real.learn.realaigym import DisturbanceProtocol, score_runs

        if report is not None:
            raise InputError("--report", None, "not with --realaigym (its lines are the result)")
        with share_progress(quiet, "evaluate") as progress:
            scores = score_runs(
                list(policies), list(reality or []), env_id=env,
                protocol=DisturbanceProtocol(episodes=episodes), seed=seed,
                processes=usable_cores(), progress=progress,
            )  # fmt: skip
        for path, per_world in scores.items():
            typer.echo(f"{path}:")
            for s in per_world:
                typer.echo(f"  {s.line()}")
        return

    if report is not None:  # before the episodes, not after them
        from sim2real.core.atomic import check_writable

        check_writable(report, "--report", folder=True)
    with share_progress(quiet, "evaluate") as progress:
        run_jobs = None
        if workers is not None or address is not None:
            run_jobs = _ray_jobs(address, workers, progress, "cells evaluated")
        results, worlds = evaluate_runs(
            list(policies), list(reality or []), env_id=env, episodes=episodes, seed=seed,
            run_jobs=run_jobs, processes=usable_cores(), progress=progress,
        )  # fmt: skip
    for path, per_world in results.items():
        typer.echo(f"{path}:")
        for r in per_world:
            typer.echo(f"  {r.line()}")
            for extra in r.details():
                typer.echo(f"    {extra}")
    if not worlds:
        typer.echo(f"(shipped realities: {', '.join(shipped_realities())})")
    if report is not None:
        from sim2real.learn.report import write_policy_report

        index = write_policy_report(report, results, worlds)
        typer.echo(f"report: {index}")
