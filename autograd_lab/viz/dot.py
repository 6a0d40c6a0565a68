"""GraphView: a ``graphviz.Digraph`` that explains how to install Graphviz when the ``dot`` program is missing.

The Python package ``graphviz`` only writes DOT text; turning it into SVG or PNG runs the ``dot`` program from the
Graphviz distribution, which pip does not install. Without it every render (and every inline display in Jupyter)
fails with a terse ``ExecutableNotFound``; this subclass re-raises it as :class:`DotNotFoundError`, which says what
to install.
"""

from __future__ import annotations

from typing import Any

import graphviz

INSTALL_HINT = (
    "the Graphviz program `dot` was not found on PATH, so the graph cannot be rendered (its DOT text is still "
    "available as `.source`). The pip package `graphviz` does not include the program; install Graphviz itself:\n"
    "  Debian/Ubuntu:  sudo apt-get install graphviz\n"
    "  conda:          conda install -c conda-forge graphviz\n"
    "  macOS (brew):   brew install graphviz\n"
    "  Windows:        winget install graphviz (then restart the Jupyter kernel)\n"
    "See https://graphviz.org/download/"
)


class DotNotFoundError(graphviz.ExecutableNotFound):
    """Rendering needs the Graphviz ``dot`` program and it is not on PATH. The message says how to install it."""

    def __init__(self) -> None:
        RuntimeError.__init__(self, INSTALL_HINT)


class GraphView(graphviz.Digraph):
    """The drawing returned by :func:`~autograd_lab.viz.draw_graph`.

    Use it like any ``graphviz.Digraph``: it displays inline in Jupyter (as SVG), ``.source`` is the DOT text,
    ``.pipe(format="svg")`` returns the rendered bytes and ``.render("graph", format="png")`` writes a file.

    Attributes:
        summary: a short, deterministic description (node and edge counts, folds) used as the ``repr``, so that a
            notebook cell showing a drawing has no memory address in its text output (nbval compares that text).
    """

    summary: str = ""

    def pipe(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """``graphviz.Digraph.pipe``, raising :class:`DotNotFoundError` when ``dot`` is missing."""
        try:
            return super().pipe(*args, **kwargs)
        except graphviz.ExecutableNotFound as exc:
            raise DotNotFoundError() from exc

    def render(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """``graphviz.Digraph.render``, raising :class:`DotNotFoundError` when ``dot`` is missing."""
        try:
            return super().render(*args, **kwargs)
        except graphviz.ExecutableNotFound as exc:
            raise DotNotFoundError() from exc

    def __repr__(self) -> str:
        return f"<GraphView: {self.summary}>"
