"""The ``sim2real`` entry point. Heavy libraries (Open3D, MuJoCo, torch) are imported inside
commands only, so ``--help`` and ``--version`` answer at once."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import typer

from sim2real import __version__
from sim2real.cli.actuator import app as actuator_app
from sim2real.cli.adapt import adapt_cmd
from sim2real.cli.depth import app as depth_app
from sim2real.cli.model import app as model_app
from sim2real.cli.policy import app as policy_app
from sim2real.cli.sysid import app as sysid_app
from sim2real.cli.track import app as track_app
from sim2real.core.errors import InputError

app = typer.Typer(
    name="sim2real",
    help="Close the gap between simulation and reality: simulate, calibrate, randomize, measure.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(depth_app, name="depth")
app.add_typer(track_app, name="track")
app.add_typer(sysid_app, name="sysid")
app.add_typer(model_app, name="model")
app.add_typer(actuator_app, name="actuator")
app.add_typer(policy_app, name="policy")
app.command("adapt")(adapt_cmd)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sim2real {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """sim2real: depth sensors and robot dynamics, simulated, calibrated, randomized, measured."""


@app.command("demo")
def demo_cmd(
    out: Path = typer.Option(
        Path("runs/demo"), "--out", help="Folder for the demo's images and report."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="Print only the report's path."),
) -> None:
    """Render the built-in bracket with several sensors (and a real frame when the data is
    present), and write an HTML report."""
    from sim2real.demo import run_demo

    result = run_demo(out, quiet=quiet)
    typer.echo(f"report: {result.report}")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


MULTI_VALUE_OPTIONS = {
    ("depth", "calibrate"): ("--frames",),
    ("depth", "gap"): ("--frames",),
    ("track", "run"): ("--frames",),
    ("model", "tune"): ("--frames", "--poses"),
    ("sysid", "fit"): ("--log", "--holdout"),
    ("sysid", "eval"): ("--log",),
    ("actuator", "fit"): ("--logs", "--candidates"),
    ("actuator", "compare"): ("--logs", "--models"),
    ("policy", "eval"): ("--reality",),
}
"""Options that take several values after one flag (``--frames a.png b.png``), per command;
click wants the flag repeated, so the arguments are rewritten before parsing."""


def _is_number_text(arg: str) -> bool:
    """'-0.1 0 0.5 ...' (a pose given as text) is a value, not an option."""
    return arg[1:2].isdigit() or arg[1:3] in (
        ".0",
        ".1",
        ".2",
        ".3",
        ".4",
        ".5",
        ".6",
        ".7",
        ".8",
        ".9",
    )


def expand_multi_value_options(argv: list[str]) -> list[str]:
    words = [a for a in argv if not a.startswith("-")][:2]
    options = MULTI_VALUE_OPTIONS.get(tuple(words), ())
    out: list[str] = []
    current = None
    for arg in argv:
        if arg in options:
            current = arg
            continue
        if current and (not arg.startswith("-") or _is_number_text(arg)):
            out += [current, arg]
            continue
        current = None
        out.append(arg)
    return out


def main() -> None:
    """Console-script entry: bad input becomes one line on stderr and exit code 2."""
    warnings.showwarning = _one_line_warning
    try:
        app(args=expand_multi_value_options(sys.argv[1:]), prog_name="sim2real")
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
