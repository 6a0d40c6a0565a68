"""The ``autograd-lab`` command line: ``autograd-lab <subcommand> [options]``; ``autograd-lab -h`` lists them.

Each subcommand is a module of this package exposing ``add_parser(subparsers)``, which adds its parser and sets
``func`` (a callable taking the parsed arguments and returning the exit status). To add one, write
``autograd_lab/cli/<name>.py`` and add ``"<name>"`` to :data:`SUBCOMMANDS`. Modules are imported when the parser is
built; keep heavy imports (matplotlib, data) inside ``func`` so ``-h`` stays fast.

User errors end the command the way argparse does, with ``autograd-lab <subcommand>: error: <message>`` on stderr and
exit status 2: option values are checked while parsing (the type functions below), and problems found later with
what the user named (a damaged model file, a model that does not fit the data) are raised as :class:`UsageError`.
Anything else that escapes a subcommand is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from autograd_lab import __version__

if TYPE_CHECKING:
    from autograd_lab.nn import Module

#: Subcommand modules, in the order ``-h`` lists them.
SUBCOMMANDS: list[str] = [
    "train",
    "evaluate",
    "export",
    "course",
]


class UsageError(Exception):
    """A user error found after parsing; :func:`main` prints ``autograd-lab <cmd>: error: <message>``, returns 2."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show ``(default: ...)`` only where it informs: not for on/off flags nor for options whose default is None
    (their help text says what happens without them)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.nargs == 0 or action.default is None:
            return action.help
        return super()._get_help_string(action)


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers ``>= low``; other values fail with "must be an integer ≥ low"."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}, got {value}")
        return value

    return parse


def float_in(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False,
             what: str = "") -> Callable[[str], float]:
    """An argparse ``type`` accepting finite floats in the interval from ``low`` to ``high`` (open ends as given).

    The message writes the interval out, e.g. "must be in [0, 1), got 1.5", preceded by ``what`` when given.
    """
    left, right = "(" if low_open else "[", ")" if high_open or math.isinf(high) else "]"
    interval = f"{left}{low:g}, {'inf' if math.isinf(high) else f'{high:g}'}{right}"
    rule = f"{what + ' ' if what else ''}must be a number in {interval}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{rule}, got {text!r}") from None
        inside = (low < value if low_open else low <= value) and (value < high if high_open else value <= high)
        if not (math.isfinite(value) and inside):
            raise argparse.ArgumentTypeError(f"{rule}, got {text}")
        return value

    return parse


def load_model(path: str | os.PathLike[str]) -> Module:
    """Load a saved model of any known class for a subcommand: a missing, unreadable or damaged file becomes a
    :class:`UsageError`."""
    from autograd_lab.nn.module import ModelFileError
    from autograd_lab.training.models import load_model as load_any

    try:
        return load_any(path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a model file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ModelFileError as exc:
        raise UsageError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per entry of :data:`SUBCOMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="autograd-lab",
        description="Train and evaluate the autograd-lab MLP (a NumPy autograd engine) on MNIST-style data.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="subcommands", dest="command", metavar="<subcommand>")
    for name in SUBCOMMANDS:
        importlib.import_module(f"autograd_lab.cli.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the subcommand, return its exit status.

    Exit status: 0 on success; 1 when the command failed on the way (no data, training diverged, a build failed);
    2 for user errors (bad option values, a missing or damaged model file), with ``autograd-lab <cmd>: error: ...``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
