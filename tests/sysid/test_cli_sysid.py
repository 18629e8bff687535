"""`sim2real sysid` as a user meets it: bad input gives one line, exit code 2, no output."""

import pytest
import yaml
from cli_helpers import assert_one_line_error, run_cli

from sim2real.sim.builtin import BUILTINS


def spec_with(tmp_path, **change):
    spec = yaml.safe_load(BUILTINS["pendulum-dfki"].spec.read_text())
    spec["params"][0].update(change)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize(
    ("case", "needles"),
    [
        ("missing_column", ["torque", "actuators.shoulder.column", "does not exist"]),
        ("unknown_body", ["no body named 'pendulm'", "close matches: pendulum"]),
        ("bounds", ["params.mass_kg", "lower 3.0 > upper 0.5"]),
        ("unknown_model", ["--model", "pendulum-dfk", "did you mean pendulum-dfki"]),
        ("missing_log", ["log not found"]),
    ],
)
def test_bad_input_one_line_exit_2_no_output(tmp_path, synth_csv, case, needles):
    path, _ = synth_csv
    out = tmp_path / "out" / "fitted.xml"
    args = ["sysid", "fit", "--model", "pendulum-dfki", "--log", path, "--out", out, "--quiet"]
    if case == "missing_column":
        bad = tmp_path / "bad.csv"
        bad.write_text(path.read_text().replace("torque", "tau", 1))
        args[5] = bad
    elif case == "unknown_body":
        args += ["--spec", spec_with(tmp_path, target="body.mass:pendulm")]
    elif case == "bounds":
        args += ["--spec", spec_with(tmp_path, bounds=[3.0, 0.5], nominal=1.0)]
    elif case == "unknown_model":
        args[3] = "pendulum-dfk"
    elif case == "missing_log":
        args[5] = tmp_path / "nope.csv"
    assert_one_line_error(run_cli(*args), *needles)
    assert not (tmp_path / "out").exists()


def test_fit_and_eval_round_trip(tmp_path, synth_csv):
    path, _ = synth_csv
    out = tmp_path / "fitted.xml"
    proc = run_cli("sysid", "fit", "--model", "pendulum-dfki", "--log", path,
                   "--out", out, "--max-iter", "3", "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and (tmp_path / "dr.yaml").is_file()
    params = yaml.safe_load((tmp_path / "fitted.params.yaml").read_text())
    ev = run_cli("sysid", "eval", "--model", out, "--log", path, "--builtin-mapping",
                 "pendulum-dfki", "--plain")  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    reported = params["errors_rmse_rad"]["plain_mjcf"]["0.5s"]
    assert f"0.5 s segments: position RMSE {reported:.4f} rad" in ev.stdout


def test_a_fit_at_its_bound_says_so_and_exits_0(tmp_path, synth_csv):
    # the synthetic truth has damping 0.08 N m s: a spec capped at 0.05 must end there
    path, _ = synth_csv
    spec = yaml.safe_load(BUILTINS["pendulum-dfki"].spec.read_text())
    for p in spec["params"]:
        if p["name"] == "damping_Nm_s":
            p["bounds"], p["nominal"] = [0.0, 0.05], 0.04
    capped = tmp_path / "spec.yaml"
    capped.write_text(yaml.safe_dump(spec))
    out = tmp_path / "fitted.xml"
    proc = run_cli("sysid", "fit", "--model", "pendulum-dfki", "--log", path, "--spec", capped,
                   "--out", out, "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: damping_Nm_s = 0.05 is at its upper bound [0, 0.05]" in proc.stdout
    params = yaml.safe_load((tmp_path / "fitted.params.yaml").read_text())
    by = {p["name"]: p for p in params["params"]}
    assert by["damping_Nm_s"]["at_bound"] and not by["mass_kg"]["at_bound"]
    assert any("damping_Nm_s" in w for w in params["warnings"])


def test_mujoco_sysid_the_benchmark_peer_is_installed_with_its_extras():
    # without mujoco[sysid]'s extras the module imports but exports nothing
    import mujoco.sysid

    assert callable(mujoco.sysid.optimize) and hasattr(mujoco.sysid, "ParameterDict")


def test_a_log_too_short_for_any_segment_is_an_error_in_eval_and_as_a_hold_out(tmp_path, synth_csv):
    path, _ = synth_csv
    lines = path.read_text().splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join(lines[:40]) + "\n")  # a fraction of a second: no 0.5 s segment
    proc = run_cli("sysid", "eval", "--model", "pendulum-dfki", "--log", short)
    assert_one_line_error(proc, str(short), "no evaluation segment fits")  # was exit 0, silent
    out = tmp_path / "out" / "fitted.xml"
    proc = run_cli("sysid", "fit", "--model", "pendulum-dfki", "--log", path, "--holdout", short,
                   "--out", out, "--max-iter", "3", "--quiet")  # fmt: skip
    assert_one_line_error(proc, str(short), "no hold-out segment fits")  # was dropped silently
    assert not (tmp_path / "out").exists()


def test_a_model_worse_than_holding_still_is_said(tmp_path, synth_csv):
    """A gear forgotten in a user's mapping 'converged' to 1.04 rad at 0.5 s, exit 0, no
    verdict (a probe): predicting the motion worse than no motion at all is said."""
    from sim2real.sysid.run import evaluate_model

    path, _ = synth_csv
    right = tmp_path / "right.yaml"
    right.write_text(BUILTINS["pendulum-dfki"].mapping.read_text())
    wrong = tmp_path / "geared.yaml"  # the torque read 6x too large (a gear)
    wrong.write_text(right.read_text().replace("{column: torque}", "{column: torque, scale: 6}"))
    ok = evaluate_model("pendulum-dfki", [path], mapping=right).summary_lines()
    bad = evaluate_model("pendulum-dfki", [path], mapping=wrong).summary_lines()
    assert not any("worse than holding still" in line for line in ok), ok
    assert any(line.startswith("WARNING: the model predicts the logged motion worse than "
                               "holding still at 0.5 s") for line in bad), bad  # fmt: skip


def test_logged_torques_beyond_the_models_force_limit_are_said(tmp_path, synth_csv):
    """A URDF's effort of 0.5 N m clipped a third of the logged torques in the simulation, and
    the fit bent the mass to match, with no word (a probe)."""
    from sim2real.sysid.run import evaluate_model

    path, _ = synth_csv
    text = BUILTINS["pendulum-dfki"].mjcf.read_text()
    limited = tmp_path / "limited.xml"
    limited.write_text(text.replace('frictionloss="0.2889"/>',
                                    'frictionloss="0.2889" actuatorfrcrange="-0.05 0.05"/>'))  # fmt: skip
    notes = evaluate_model(str(limited), [path], builtin_mapping="pendulum-dfki").notes
    assert any("beyond joint shoulder's force limit -0.05..0.05 N m" in n for n in notes), notes
    assert not evaluate_model("pendulum-dfki", [path]).notes
