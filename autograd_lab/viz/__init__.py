"""Seeing the graph: Graphviz drawings of computational graphs, a backward-pass stepper, and training diagnostics.

Graph views (need the ``graphviz`` package; rendering needs the Graphviz ``dot`` program)::

    from autograd_lab.viz import draw_graph, backward_stepper, show_backward_steps
    draw_graph(loss)                    # displays inline in Jupyter; .source is the DOT text
    draw_graph(loss).save_as("graph.png")  # or .svg, .pdf, .dot: the suffix picks the format
    show_backward_steps(loss)           # every frame embedded: works in saved notebooks, without a kernel

Diagnostics plots (need matplotlib; each returns a ``matplotlib.figure.Figure`` and never calls ``plt.show``)::

    from autograd_lab.viz import plot_training_curves, plot_gradient_flow, plot_confusion_matrix, ...
"""

from __future__ import annotations

import importlib
from typing import Any

# Each public name and the submodule that defines it. Submodules are imported on first use, so that the plots
# (matplotlib only) work where the graphviz package is not installed, e.g. for the training job.
_SOURCES = {
    "DotNotFoundError": "dot",
    "GraphView": "dot",
    "draw_graph": "graph",
    "plot_activation_histograms": "plots",
    "plot_confusion_matrix": "plots",
    "plot_gradient_flow": "plots",
    "plot_misclassified": "plots",
    "plot_training_curves": "plots",
    "plot_weight_histograms": "plots",
    "BackwardAnimation": "animation",
    "BackwardStep": "stepper",
    "backward_step_graphs": "stepper",
    "backward_stepper": "stepper",
    "backward_steps": "stepper",
    "show_backward_steps": "stepper",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module 'autograd_lab.viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"autograd_lab.viz.{_SOURCES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_SOURCES))


__all__ = [
    "BackwardAnimation",
    "BackwardStep",
    "DotNotFoundError",
    "GraphView",
    "backward_step_graphs",
    "backward_stepper",
    "backward_steps",
    "draw_graph",
    "plot_activation_histograms",
    "plot_confusion_matrix",
    "plot_gradient_flow",
    "plot_misclassified",
    "plot_training_curves",
    "plot_weight_histograms",
    "show_backward_steps",
]
