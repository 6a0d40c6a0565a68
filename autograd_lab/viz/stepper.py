"""The backward-pass stepper: the same drawing, frame by frame, as the gradients flow from the root to the leaves.

The stepper runs its own backward over the graph, in the order ``Engine.backward`` uses
(:meth:`Engine.backward_order`) and through the same checked per-node call (``Operator.run_backward``), but it keeps
every gradient in a dictionary of its own instead of in ``.grad``. So the graph is neither released nor changed: the
``.grad`` of the leaves stays what it was, and ``Engine.backward`` can still run on the graph afterwards. Like
``Engine.backward`` (and the engine the learner writes in chapter 03), it frees an internal node's gradient as soon
as that node's operator has passed it on: later frames draw such a node with "grad freed", not with a stale number.

Frame 0 shows the seed (d root / d root = 1); frame j shows the graph right after the j-th operator ran its
backward, with that operator and the nodes whose gradient it changed drawn in green.

:func:`show_backward_steps` shows the frames as a self-contained animation (:mod:`autograd_lab.viz.animation`):
every frame is embedded, so a saved notebook, nbconvert's HTML, nbgrader's feedback, GitHub and nbviewer all show
the whole backward pass, with or without a kernel. ``live=True`` gives an ipywidgets slider instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.engine import Engine
from autograd_lab.variable import Variable
from autograd_lab.viz.graph import DrawOptions, build_view

if TYPE_CHECKING:  # graphviz loads on the first drawing, not on import
    from autograd_lab.viz.dot import GraphView

#: Frames are for graphs small enough to read step by step.
MAX_FRAMES = 200


@dataclass(frozen=True)
class BackwardStep:
    """The state after one step of :func:`backward_steps`.

    Attributes:
        node: the Variable whose operator just ran backward (None for the seeding step 0).
        grads: the gradients held after this step, d(root)/d(v): every leaf reached so far, and the internal nodes
            whose operator has not run yet (a snapshot).
        changed: the inputs of ``node`` whose gradient this step changed, in input order.
        freed: the internal nodes whose gradient has been passed on and freed, as ``Engine.backward`` frees it
            (``node`` itself among them).
    """

    node: Variable | None
    grads: dict[Variable, np.ndarray]
    changed: tuple[Variable, ...]
    freed: frozenset[Variable] = frozenset()


def backward_steps(root: Variable, grad: Any = None) -> Iterator[BackwardStep]:
    """Run the backward pass through ``root``'s graph one operator at a time, yielding the state after each step.

    Step 0 seeds the root; then every operator that receives a gradient runs, in ``Engine.backward_order``. The graph
    and the ``.grad`` attributes are left untouched (see the module docstring).

    Args:
        root: the node to differentiate; its graph must not be released.
        grad: d(something)/d(root), shape ``root.shape``; defaults to 1 for a one-element root.

    Raises:
        ValueError: if ``grad`` is missing for a root with more than one element, or has the wrong shape.
        GraphReleasedError, InPlaceModificationError, ShapeError: as ``Engine.backward``.
    """
    order = Engine.backward_order(root)
    if grad is None:
        if root.size != 1:
            raise ValueError(f"grad= is needed for a root of shape {root.shape}; only a one-element root is seeded")
        seed = np.ones_like(root.data)
    else:
        seed = np.array(grad, dtype=root.dtype)
        if seed.shape != root.shape:
            raise ValueError(f"grad has shape {seed.shape}, but the root has shape {root.shape}")
    grads: dict[Variable, np.ndarray] = {root: seed}
    freed: set[Variable] = set()
    yield BackwardStep(None, dict(grads), ())
    for node in order:
        op = node.op
        if op is None or node not in grads:
            continue
        changed = []
        gy = grads.pop(node)  # passed on now, so freed, as Engine.backward does
        freed.add(node)
        op.check_versions(node.parents)
        for parent, g in zip(node.parents, op.run_backward(gy)):
            if g is not None:
                grads[parent] = grads[parent] + g if parent in grads else g
                changed.append(parent)
        yield BackwardStep(node, dict(grads), tuple(changed), frozenset(freed))


def backward_step_graphs(
    root: Variable,
    grad: Any = None,
    *,
    max_frames: int = MAX_FRAMES,
    caption_in_picture: bool = True,
    **draw_options: Any,
) -> list[GraphView]:
    """Return one drawing per step of :func:`backward_steps`.

    Args:
        root, grad: as in :func:`backward_steps`.
        max_frames: refuse graphs with more operators than this minus one.
        caption_in_picture: draw each frame's caption above the graph; when False it is only kept as the view's
            ``caption`` (the animation prints it as HTML text instead).
        **draw_options: keyword options of :func:`~autograd_lab.viz.draw_graph` (``show_values``, ``topo_numbers``,
            ``rankdir``, ...).

    Returns:
        ``1 + number of operators that receive a gradient`` drawings, each with a caption naming the step.

    Raises:
        ValueError: if the graph needs more than ``max_frames`` frames, and as :func:`backward_steps`.
    """
    options = DrawOptions(**draw_options)
    order = Engine.topo_sort(root)
    n_ops = sum(v.op is not None for v in order)
    if n_ops + 1 > max_frames:
        raise ValueError(
            f"the backward pass has {n_ops} steps, more than max_frames={max_frames}; the stepper is meant for "
            "graphs small enough to read step by step (draw_graph shows a large graph in one picture)"
        )
    index = {v: k for k, v in enumerate(order)}  # the drawing's node ids n<k>
    frames = []
    for j, step in enumerate(backward_steps(root, grad)):
        if step.node is None:
            caption = f"step 0 of {n_ops}: seed the root's gradient"
        else:
            receivers = ", ".join(dict.fromkeys(p.name or f"n{index[p]}" for p in step.changed)) or "no input"
            op_name = type(step.node.op).__name__
            own = step.node.name or f"n{index[step.node]}"
            caption = (
                f"step {j} of {n_ops}: {op_name}.backward sends the gradient to {receivers}; "
                f"the gradient of {own} is freed"
            )
        frames.append(
            build_view(
                root, options, step.grads, step.node, frozenset(step.changed), caption, step.freed, caption_in_picture
            )
        )
    return frames


def backward_stepper(root: Variable, grad: Any = None, **options: Any) -> list[str]:
    """Render :func:`backward_step_graphs` as a list of SVG documents (str), one per frame.

    Raises:
        DotNotFoundError: if the Graphviz ``dot`` program is missing (the message says how to install it).
    """
    return [frame.pipe(format="svg", encoding="utf-8") for frame in backward_step_graphs(root, grad, **options)]


def show_backward_steps(root: Variable, grad: Any = None, *, live: bool = False, **options: Any) -> Any:
    """Show the backward pass in Jupyter, one frame per step (make the result the last expression of a cell).

    Args:
        root, grad, **options: as :func:`backward_step_graphs`.
        live: False (default) returns a :class:`~autograd_lab.viz.animation.BackwardAnimation`: every frame
            embedded in HTML, each captioned "step k of n", with play / step buttons and a slider run by a little
            JavaScript. Where scripts do not run (GitHub, an untrusted notebook) all frames are shown one below the
            other, so the whole pass is visible in every saved or converted copy of the notebook. True returns an
            ipywidgets slider that needs a running kernel (falls back to the animation without ipywidgets).

    Raises:
        DotNotFoundError: if the Graphviz ``dot`` program is missing (the message says how to install it).
    """
    from autograd_lab.viz.animation import BackwardAnimation

    widgets: Any = None
    if live:
        try:
            import ipywidgets
        except ImportError:
            pass
        else:
            widgets = ipywidgets
    if widgets is None:
        graphs = backward_step_graphs(root, grad, caption_in_picture=False, **options)
        svgs = [frame.pipe(format="svg", encoding="utf-8") for frame in graphs]
        return BackwardAnimation(svgs, [frame.caption for frame in graphs])
    frames = [svg[svg.index("<svg") :] for svg in backward_stepper(root, grad, **options)]
    slider = widgets.IntSlider(value=0, min=0, max=len(frames) - 1, description="step")
    play = widgets.Play(value=0, min=0, max=len(frames) - 1, interval=1200)
    widgets.jslink((play, "value"), (slider, "value"))
    picture = widgets.HTML(value=frames[0])

    def show(change: dict[str, Any]) -> None:
        picture.value = frames[change["new"]]

    slider.observe(show, names="value")
    return widgets.VBox([widgets.HBox([play, slider]), picture])
