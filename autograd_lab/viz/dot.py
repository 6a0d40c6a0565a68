"""GraphView: a ``graphviz.Digraph`` that explains how to install Graphviz when the ``dot`` program is missing.

The Python package ``graphviz`` only writes DOT text; turning it into SVG or PNG runs the ``dot`` program from the
Graphviz distribution, which pip does not install. Without it every render (and every inline display in Jupyter)
fails with a terse ``ExecutableNotFound``; this subclass re-raises it as :class:`DotNotFoundError`, which says what
to install.
"""

from __future__ import annotations

from pathlib import Path
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


#: Picture formats :meth:`GraphView.save_as` renders with Graphviz (DOT text is written as well: ``.dot``, ``.gv``).
SAVE_FORMATS = ("png", "svg", "pdf")


class DotNotFoundError(graphviz.ExecutableNotFound):
    """Rendering needs the Graphviz ``dot`` program and it is not on PATH. The message says how to install it."""

    def __init__(self) -> None:
        RuntimeError.__init__(self, INSTALL_HINT)


class GraphView(graphviz.Digraph):
    """The drawing returned by :func:`~autograd_lab.viz.draw_graph`.

    Use it like any ``graphviz.Digraph``: it displays inline in Jupyter (as SVG), ``.source`` is the DOT text and
    ``.pipe(format="svg")`` returns the rendered bytes. ``.save_as("graph.png")`` writes one picture file, in the format
    its suffix names (PNG needs no SVG converter: Graphviz renders it itself).

    Attributes:
        summary: a short, deterministic description (node and edge counts, folds) used as the ``repr``, so that a
            notebook cell showing a drawing has no memory address in its text output (nbval compares that text).
        caption: the caption printed above the drawing, if any (the stepper's "step k of n: ...").
    """

    summary: str = ""
    caption: str = ""

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

    def save_as(self, path: str | Path, *, dpi: int = 144) -> Path:
        """Write the drawing to ``path`` in the format its suffix names, and return the path.

        Suffixes: ``.png`` (raster, ``dpi`` dots per inch), ``.svg``, ``.pdf``, and ``.dot`` / ``.gv`` (the DOT text,
        which needs no Graphviz program).
        Unlike ``render`` (and graphviz's own ``save``, which writes the DOT text), exactly one file is written, at
        exactly ``path``.

        Raises:
            ValueError: for any other suffix (the message lists the supported ones).
            DotNotFoundError: for a rendered format when the Graphviz ``dot`` program is missing.
        """
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt in ("dot", "gv"):
            path.write_text(self.source, encoding="utf-8")
            return path
        if fmt not in SAVE_FORMATS:
            raise ValueError(
                f"cannot tell the picture format from {path.name!r}: end the file name with one of "
                + ", ".join(f".{f}" for f in (*SAVE_FORMATS, "dot", "gv"))
            )
        view = self
        if fmt == "png":
            view = self.copy()
            view.attr(dpi=str(dpi))  # Graphviz's default of 72 dpi gives blurry text
        path.write_bytes(view.pipe(format=fmt))
        return path

    def __repr__(self) -> str:
        return f"<GraphView: {self.summary}>"
