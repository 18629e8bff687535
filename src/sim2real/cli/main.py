"""The ``sim2real`` entry point. Heavy libraries (Open3D, MuJoCo, torch) are imported inside
commands only, so ``--help`` and ``--version`` answer at once."""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

import typer

from sim2real import __version__
from sim2real.cli.actuator import app as actuator_app
from sim2real.cli.adapt import adapt_cmd
from sim2real.cli.depth import app as depth_app
from sim2real.cli.detect import app as detect_app
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
app.add_typer(detect_app, name="detect")
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


def one_line_summaries(typer_app: typer.Typer) -> None:
    """Give every command a ``short_help``: the first paragraph of its docstring on one line.
    In rich markup mode typer keeps the docstring's own line breaks in a group's command list
    (its ``--help`` of one command joins them), so a summary printed ragged, broken mid-sentence
    wherever the source wrapped it."""
    for info in typer_app.registered_commands:
        text = info.help or inspect.getdoc(info.callback) or ""
        if info.short_help is None and text:
            info.short_help = " ".join(text.partition("\n\n")[0].split())
    for group in typer_app.registered_groups:
        one_line_summaries(group.typer_instance)


one_line_summaries(app)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


MULTI_VALUE_OPTIONS = {
    ("depth", "calibrate"): ("--frames",),
    ("depth", "gap"): ("--frames",),
    ("track", "run"): ("--frames", "--color"),
    ("detect", "run"): ("--frames", "--color"),
    ("detect", "finetune"): ("--frames", "--color"),
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


# typer parses with its own copy of click: its exceptions are the ones to catch
_CLICK = sys.modules[typer.BadParameter.__module__]


def _usage_line(err) -> str:
    """A usage error (unknown option, a value out of range, a missing argument) as one line
    naming the option."""
    if isinstance(err, _CLICK.BadParameter) and err.param is not None:
        opts = getattr(err.param, "opts", None)
        name = opts[0] if opts else (err.param.name or "").upper()
        message = err.message or " ".join(err.format_message().split())
        return f"{name}: {message}"
    if isinstance(err, _CLICK.NoSuchOption):
        hint = f" (did you mean {', '.join(err.possibilities)}?)" if err.possibilities else ""
        return f"{err.option_name}: no such option{hint}"
    return " ".join(err.format_message().split())


TYPER_INTERRUPTED = 130
"""What typer returns (not raises) for a Ctrl-C inside a command when not standalone; no
command of ours returns it."""


def main() -> None:
    """Console-script entry: bad input, a usage mistake or an interruption becomes one line on
    stderr and exit code 2 (no traceback); a refusal to adapt exits 3 (the command says so)."""
    warnings.showwarning = _one_line_warning
    argv = expand_multi_value_options(sys.argv[1:])
    try:
        code = app(args=argv, prog_name="sim2real", standalone_mode=False)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except _CLICK.NoArgsIsHelpError as err:  # a bare group: its help, as click shows it
        print(err.ctx.get_help() if err.ctx is not None else err.format_message())
        sys.exit(2)
    except _CLICK.UsageError as err:
        print(f"error: {_usage_line(err)}", file=sys.stderr)
        sys.exit(2)
    except (KeyboardInterrupt, typer.Abort):
        code = TYPER_INTERRUPTED
    if code == TYPER_INTERRUPTED:
        print("error: interrupted: nothing was written", file=sys.stderr)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
