"""The policy report: the ablation table (policy x world: success rate and return), the
training curves of each run, a velocity-command task's tracking part
(:mod:`sim2real.learn.tracking_report`), and ``eval.json`` with every figure."""

from __future__ import annotations

import json
from pathlib import Path

from sim2real.core.atomic import write_text_atomic
from sim2real.core.report import ReportSection, save_figure, write_html_report
from sim2real.learn.evaluate import TRAINING, EvalResult
from sim2real.learn.tracking_report import tracking_sections


def ablation_grid(results: dict[str, list[EvalResult]]) -> list[list[str]]:
    """Header (policy, each world) then one row per policy: 'success % (return)'."""
    worlds = [r.world for r in next(iter(results.values()))] if results else []
    grid = [["policy", *worlds]]
    for name, rows in results.items():
        cells = {
            r.world: "n/a" if r.skipped else f"{100 * r.success_rate:.0f} % ({r.mean_return:.0f})"
            for r in rows
        }
        grid.append([name, *(cells.get(w, "-") for w in worlds)])
    return grid


def markdown_table(results: dict[str, list[EvalResult]]) -> str:
    grid = ablation_grid(results)
    lines = ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * len(grid[0])]
    lines += ["| " + " | ".join(row) + " |" for row in grid[1:]]
    return "\n".join(lines)


def curves_png(path: Path, runs: dict[str, Path]) -> bool:
    """Mean episode return and success rate against environment steps, one line per run
    with a ``metrics.csv`` (False when none has one)."""
    from sim2real.core.report import pyplot
    from sim2real.learn.train import METRICS_FILE, read_metrics
    from sim2real.learn.validation_watch import read_validation

    curves = {k: read_metrics(p) for k, p in runs.items() if (p / METRICS_FILE).is_file()}
    curves = {k: rows for k, rows in curves.items() if rows and "env_steps" in rows[0]}  # PPO
    if not curves:
        return False
    plt = pyplot()
    fig, (ax_r, ax_s) = plt.subplots(1, 2, figsize=(11, 3.6))
    for k, (name, rows) in enumerate(curves.items()):
        steps = [r["env_steps"] / 1e6 for r in rows]
        ax_r.plot(steps, [r["mean_return"] for r in rows], f"C{k}", label=name)
        ax_s.plot(steps, [100 * r["success_rate"] for r in rows], f"C{k}", label=name)
        checks = read_validation(runs[name])  # the kept iterate filled, the others open
        for row in checks:
            face = f"C{k}" if row["kept"] else "none"
            ax_s.plot(row["env_steps"] / 1e6, 100 * row["success"], "o", mec=f"C{k}", mfc=face)
    ax_r.set(xlabel="environment steps [million]", ylabel="mean episode return")
    ax_s.set(xlabel="environment steps [million]", ylabel="success [%]", ylim=(-2, 102))
    ax_s.legend(fontsize=7, loc="best")
    fig.suptitle(
        "training curves (each policy in its own training conditions, stochastic actions; "
        "circles: validation worlds, filled where a new best was kept)",
        fontsize=9,
    )
    fig.tight_layout()
    save_figure(fig, path, dpi=100)
    return True


def write_policy_report(
    folder: str | Path, results: dict[str, list[EvalResult]], realities: list
) -> Path:
    """``folder/index.html`` and ``folder/eval.json``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    doc = {name: [r.to_dict() for r in rows] for name, rows in results.items()}
    write_text_atomic(folder / "eval.json", json.dumps(doc, indent=2) + "\n")
    episodes = max((len(r.returns) for rows in results.values() for r in rows), default=0)
    described = [(TRAINING, "each policy's own environment and randomization")]
    described += [(r.name, r.description or r.source) for r in realities]
    sections = [
        ReportSection(
            "Transfer evaluation",
            f"Success rate (return) over {episodes} episodes per world; success = every goal "
            "joint within the task's band of its goal for its hold time without interruption "
            "(the pendulums: 0.2 rad for 2 s by default; a task without goal joints, the Go1: "
            "no fall for the hold time, 20 s: the whole episode); n/a: a teacher whose "
            "privileged observation has another layout in that world. Worlds:",
            table=described,
            grid=ablation_grid(results),
        )
    ]
    if curves_png(folder / "training_curves.png", {k: Path(k) for k in results}):
        sections.append(ReportSection("Training curves", "", ["training_curves.png"]))
    sections += tracking_sections(folder, results)
    return write_html_report(folder, "sim2real policies: transfer evaluation", sections)
