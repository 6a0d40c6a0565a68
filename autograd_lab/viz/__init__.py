"""Seeing the graph: Graphviz drawings of computational graphs, a backward-pass stepper, and training diagnostics.

Graph views (need the ``graphviz`` package; rendering needs the Graphviz ``dot`` program)::

    from autograd_lab.viz import draw_graph, backward_stepper, show_backward_steps
    draw_graph(loss)                    # displays inline in Jupyter; .source is the DOT text

Diagnostics plots (need matplotlib; each returns a ``matplotlib.figure.Figure`` and never calls ``plt.show``)::

    from autograd_lab.viz import plot_training_curves, plot_gradient_flow, plot_confusion_matrix, ...
"""

from autograd_lab.viz.dot import DotNotFoundError, GraphView
from autograd_lab.viz.graph import draw_graph
from autograd_lab.viz.plots import (
    plot_activation_histograms,
    plot_confusion_matrix,
    plot_gradient_flow,
    plot_misclassified,
    plot_training_curves,
    plot_weight_histograms,
)
from autograd_lab.viz.stepper import (
    BackwardStep,
    backward_step_graphs,
    backward_stepper,
    backward_steps,
    show_backward_steps,
)

__all__ = [
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
