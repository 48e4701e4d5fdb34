"""The ``planner`` command line: a thin shell over the library.

Commands live in ``planner/commands/`` and are imported only when run, so ``planner --help`` and a
quote stay fast (pandas, requests and APScheduler load only in the commands that use them). A user's
mistake prints one line and a hint, never a traceback.
"""

from __future__ import annotations

import errno
import importlib
import sys

import click

from planner import __version__
from planner.errors import PlannerError

# name -> (module, function, one-line help). Adding a command is one line here plus its module.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "quote": (
        "planner.commands.quote",
        "quote",
        "The cheapest provider, instance and billing mode for a job.",
    ),
    "prices": ("planner.commands.prices", "prices", "The latest price of every instance and billing mode."),
    "gpus": ("planner.commands.gpus", "gpus", "The GPU catalog: names, aliases and specs."),
    "import": ("planner.commands.transfer", "import_cmd", "Import prices from a CSV file (atomic)."),
    "export": ("planner.commands.transfer", "export_cmd", "Export stored prices as CSV."),
    "refresh": ("planner.commands.refresh", "refresh", "Pull today's GPU prices from the providers."),
    "runs": ("planner.commands.refresh", "runs", "Recent refreshes and imports, and their health."),
    "providers": (
        "planner.commands.refresh",
        "providers",
        "Providers, their mode and what to set to see more.",
    ),
    "history": ("planner.commands.history", "history", "How one GPU's prices and availability changed."),
    "estimate": ("planner.commands.estimate", "estimate", "Memory, GPUs and GPU-hours for a workload."),
    "models": ("planner.commands.models", "models", "The model catalog: published architectures."),
    "plan": (
        "planner.commands.plan",
        "plan",
        "Every GPU that fits a workload, cheapest way to rent it first.",
    ),
    "tco": ("planner.commands.rent_or_buy", "tco", "Rent against buy: total cost and break-even."),
    "report": ("planner.commands.report", "report", "Write CSV price reports, optionally e-mail them."),
    "schedule": ("planner.commands.schedule", "schedule", "Run the nightly refresh and report."),
    "alerts": ("planner.commands.alerts", "alerts", "Alerts when a GPU gets cheap or comes free."),
}


class UserFacingError(click.ClickException):
    """A PlannerError shown as ``Error: ...`` plus ``Hint: ...``, with the error's exit code."""

    def __init__(self, error: PlannerError):
        super().__init__(error.message)
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance
        self.hint = error.hint

    def show(self, file=None) -> None:  # noqa: ANN001 - click's signature
        from planner.text import printable  # a name from a file can carry a terminal's controls

        click.echo(f"Error: {printable(self.message)}", err=True)
        if self.hint:
            click.echo(f"Hint: {printable(self.hint)}", err=True)


class HouseUsageError(click.UsageError):
    """Click's own usage error (bad option, missing value) printed as ``Error:`` plus ``Hint:``.

    Click prints usage text, a "Try ..." line and the error; every other mistake in planner prints one
    ``Error:`` line and a ``Hint:``, so click's are printed the same way.
    """

    def __init__(self, error: click.UsageError, hint: str | None = None):
        super().__init__(error.format_message(), error.ctx)
        self.hint = hint  # None: "see 'planner COMMAND --help'"

    def show(self, file=None) -> None:  # noqa: ANN001 - click's signature
        click.echo(f"Error: {self.message}", err=True)
        # The root's name is whatever ran us (a test runner says "cli"); users type "planner".
        words = self.ctx.command_path.split()[1:] if self.ctx is not None else []
        command = " ".join(["planner", *words])
        hint = self.hint or f"see '{command} --help' for the options and examples."
        click.echo(f"Hint: {hint}", err=True)


class Interrupted(click.ClickException):
    """Ctrl-C (SIGINT): ``Interrupted.`` and exit code 130 (128 + SIGINT), as shells report it, never
    click's "Aborted!" and 1. A refresh marks the runs it leaves ``interrupted`` before this is raised."""

    exit_code = 130

    def __init__(self) -> None:
        super().__init__("Interrupted.")

    def show(self, file=None) -> None:  # noqa: ANN001 - click's signature
        click.echo("Interrupted.", err=True)


# The options of ``planner`` itself: typed after a command, they are pointed back before it.
ROOT_OPTIONS = ("--db", "--config", "--lang")


class LazyGroup(click.Group):
    def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201 - click's signature
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # bare `planner`: click prints the help (exit 2: no command was given)
        except click.UsageError as err:
            raise HouseUsageError(err) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_repeated(self, ctx, args)  # `planner --db A --db B quote`
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]):  # noqa: ANN201
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as err:
            import difflib

            near = difflib.get_close_matches(args[0], list(COMMANDS), n=1) if args else []
            if near:
                err.message += f" (did you mean {near[0]!r}?)"  # type: ignore[misc]  # click prints it
            raise
        if command is not None and name is not None:
            refuse_repeated(command, _context(command, name, ctx), rest)
        return name, command, rest

    def invoke(self, ctx: click.Context):  # noqa: ANN201
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None
        except BrokenPipeError:  # `planner prices | head`: click would exit 1; a filter's reader is done
            from planner.commands.emit import quiet_exit_on_closed_pipe

            quiet_exit_on_closed_pipe()
        except PlannerError as err:
            from planner.commands.flags import as_typed

            raise UserFacingError(as_typed(err, _invoked(self, ctx), self)) from None
        except click.UsageError as err:
            if isinstance(err, HouseUsageError):
                raise
            if isinstance(err, click.NoSuchOption) and err.option_name in ROOT_OPTIONS:
                raise _root_option_after_command(err) from None
            raise HouseUsageError(err) from None


def _root_option_after_command(err: click.NoSuchOption) -> HouseUsageError:
    """``planner quote --db URL``: not "did you mean --days?", but where ``--db`` goes."""
    words = " ".join(err.ctx.command_path.split()[1:]) if err.ctx else "COMMAND"
    name = err.option_name
    metavar = {"--db": "URL", "--lang": "zh|en"}.get(name, "FILE")
    moved = click.UsageError(f"{name} is an option of planner itself: give it before the command", err.ctx)
    return HouseUsageError(moved, hint=f"planner {name} {metavar} {words} ...")


def refuse_repeated(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """One rule for every command: an option that takes one value (``--hours``, ``--format``, an on/off
    pair such as ``--checkpointing/--no-checkpointing``) given twice is a usage error naming it, never "the last one
    wins". Repeatable options (``--gpu`` where several are taken, ``--provider``) and plain switches
    (``--dry-run``) may repeat. A group's command is checked the same way, down to the one run. A
    mistake the parse itself meets (an unknown option) is left for click's own parse to word."""
    try:
        _values, rest, order = command.make_parser(ctx).parse_args(args=list(args))
    except click.UsageError:
        return
    counts: dict[str, int] = {}
    for param in order:
        if not isinstance(param, click.Option) or param.multiple or param.count:
            continue
        if param.is_flag and not param.secondary_opts:
            continue  # a switch given twice is the same switch
        counts[param.opts[0]] = counts.get(param.opts[0], 0) + 1
    twice = [name for name, count in counts.items() if count > 1]
    if twice:
        shown = " and ".join(twice)
        each = "it" if len(twice) == 1 else "each"
        raise click.UsageError(f"{shown} given more than once: give {each} once (no last one wins)", ctx)
    if isinstance(command, click.Group) and rest:
        sub = command.get_command(ctx, rest[0])
        if sub is not None:
            refuse_repeated(sub, _context(sub, rest[0], ctx), rest[1:])


def _context(command: click.Command, name: str, parent: click.Context) -> click.Context:
    """A context for parsing ``command``'s arguments as click will (its own context settings)."""
    return click.Context(command, info_name=name, parent=parent, **command.context_settings)


def _invoked(group: click.Group, ctx: click.Context) -> click.Command | None:
    """The command ``ctx`` ran, whose flags name what a library error is about."""
    name = ctx.invoked_subcommand
    return group.get_command(ctx, name) if name else None


@click.group(
    cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.option(
    "--db",
    "db_url",
    metavar="URL",
    envvar="PLANNER_DATABASE_URL",
    help="Database URL (default: a SQLite file in your data directory).",
)
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    envvar="PLANNER_CONFIG",
    type=click.Path(dir_okay=False),
    help="Settings file (default: ./config.toml, then packaged defaults).",
)
@click.option(
    "--lang",
    type=click.Choice(["en", "zh"]),
    help="Language people read: zh (简体中文) or en (default: [locale] language, else from LANG).",
)
@click.version_option(__version__, prog_name="planner")
@click.pass_context
def cli(ctx: click.Context, db_url: str | None, config_file: str | None, lang: str | None) -> None:
    """Where to rent GPUs in China, on which billing mode, and whether buying would be cheaper.

    \b
    Examples:
      planner quote --gpu A100 --hours 500
      planner quote --gpu H800 --gpus 8 --hours 300 --days 30
      planner prices --gpu RTX4090 --format csv
      planner gpus
      planner --lang zh quote --gpu H800 --gpus 8 --hours 300
    """
    from planner.app import App

    ctx.obj = App(
        config_file=config_file, db_url=db_url, lang=lang, say=lambda line: click.echo(line, err=True)
    )


# What writing the output meets when its disk is full or its reader gone (`planner prices > /dev/full`).
_OUTPUT_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EPIPE, errno.EIO}


def main() -> None:
    try:
        cli.main(prog_name="planner")
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except OSError as err:
        if err.filename is not None or err.errno not in _OUTPUT_ERRORS:
            raise  # not a write that failed on its way out: a bug to see whole
        from planner.commands.emit import quiet_exit_on_closed_pipe, silence_stdout

        if err.errno == errno.EPIPE:  # `planner prices | head`: the reader has all it wanted
            quiet_exit_on_closed_pipe()
        silence_stdout()
        click.echo(f"Error: cannot write the output: {err.strerror or err}", err=True)
        click.echo("Hint: check the disk (or pipe) it goes to has room", err=True)
        sys.exit(1)
