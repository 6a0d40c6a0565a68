"""The ``autograd-lab`` command line: ``autograd-lab <subcommand> [options]``; ``autograd-lab -h`` lists them.

Each subcommand is a module of this package exposing ``add_parser(subparsers)``, which adds its parser and sets
``func`` (a callable taking the parsed arguments and returning the exit status). To add one, write
``autograd_lab/cli/<name>.py`` and add ``"<name>"`` to :data:`SUBCOMMANDS`. Modules are imported when the parser is
built; keep heavy imports (matplotlib, data) inside ``func`` so ``-h`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from autograd_lab import __version__

#: Subcommand modules, in the order ``-h`` lists them.
SUBCOMMANDS: list[str] = [
    "train",
    "evaluate",
    "export",
    "course",
]


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

    Exit status: 0 on success, 1 when the command failed (a message on stderr says why), 2 for usage errors.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args))
