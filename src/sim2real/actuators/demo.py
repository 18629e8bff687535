"""Actuator demo: the real XL330 bench, two physical models (Coulomb-viscous, and BAM's
directional friction with the torque constant's droop) fitted briefly on the logs at gains 100
and 200, and the measured vs predicted servo motion on a held-out gain (400). About 20 s on two
cores; the benchmark and ``sim2real actuator compare`` fit longer and choose by leave one gain
out."""

from __future__ import annotations

from pathlib import Path

from sim2real.core.report import ReportSection

DEMO_MODELS = ("coulomb-viscous", "directional-droop")
HOLDOUT_KP = 400.0


def run_actuator_demo(out: Path, quiet: bool = False, budget_s: float = 8.0) -> ReportSection:
    """Fit, compare and plot into ``out``; one report section (says so without the data)."""
    from sim2real.actuators.catalog import FitSettings
    from sim2real.actuators.compare import compare_models
    from sim2real.actuators.compare_report import comparison_section
    from sim2real.actuators.servo_log import read_servo_log, split_logs
    from sim2real.core.data import data_root

    title = "Actuators: measured vs predicted servo motion (real XL330 bench)"
    root = data_root()
    folder = None if root is None else root / "real" / "servo-bam-xl330" / "processed"
    if folder is None or not folder.is_dir():
        return ReportSection(title, "real servo data not found: skipped")
    logs = [read_servo_log(p) for p in sorted(folder.glob("*.json"))]
    train, hold = split_logs(logs, HOLDOUT_KP)
    say = None if quiet else (lambda line: print(f"actuator {line}"))
    settings = FitSettings(restarts=0, time_budget_s=budget_s)
    rows, _ = compare_models(
        list(DEMO_MODELS), train, hold, settings=settings, select=False, progress=say
    )
    text = (
        f"DC-motor servo models fitted for {budget_s:g} s each (CMA-ES on the simulated position "
        f"error) on {len(train)} logs at kp 100 and 200, then driven by the goal positions of "
        f"the {len(hold)} logs at kp {HOLDOUT_KP:g}, which no fit saw. "
        "benchmarks/RESULTS.md has the full comparison (longer fits, every model, the network)."
    )
    return comparison_section(out, rows, hold[:2], title, text)
