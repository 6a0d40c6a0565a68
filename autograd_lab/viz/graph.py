"""draw_graph: a Graphviz drawing of the computational graph behind a Variable.

The drawing has two kinds of node, as in the course's figures:

* Variables (rounded boxes) show name, kind, shape, dtype, a summary of the value and, once it exists, of the
  gradient. Colours tell the kinds apart, and the kind is also written in the box for readers who cannot rely on
  colour: **leaf** (inputs and constants) pale blue, **Parameter** (trainable leaves) pale orange with a thick
  border, internal nodes white, the **root** with a double border.
* Operators (lavender ellipses) show the op class and its configuration (``Operator.config()``); an op whose output
  depends on train/eval mode (dropout) has a dashed outline.

Edges follow the data forward: input Variable -> Operator -> output Variable, one edge per input in parent order (an
input used twice has two edges). Where input order matters (every op with several inputs except Add and Mul) each
edge is labelled with the input's index and the name of ``forward``'s parameter, e.g. ``0: a`` and ``1: b`` for
MatMul. A value or gradient holding NaN or inf is printed in red on a pink cell and its box gets a red border.

Node ids are ``n<k>`` for the Variable at position k of ``Engine.topo_sort(root)`` and ``op<k>`` for the Operator
that produced it; groups and folded boxes are ``cluster_g<k>`` and ``f<k>``. The DOT text therefore depends only on
the graph, never on memory addresses, and is identical from run to run.
An unnamed Variable is titled with its node id (``n3``: the fourth Variable in that order); the legend says so.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from autograd_lab.engine import Engine
from autograd_lab.operator import Operator
from autograd_lab.ops.arithmetic import AddOp, MulOp
from autograd_lab.variable import Parameter, Variable
from autograd_lab.viz.folding import Fold, GroupBy, assign_groups, fold_graph
from autograd_lab.viz.labels import escape_label, format_config_value, is_nonfinite, summarize

if TYPE_CHECKING:  # graphviz loads on the first drawing, not on import (a setup cell imports draw_graph)
    from autograd_lab.viz.dot import GraphView

FONT = "Helvetica,Arial,sans-serif"
#: Fill, border colour and pen width of each kind of node (also drawn in the legend).
STYLES: dict[str, dict[str, str]] = {
    "leaf": {"fillcolor": "#e3eefa", "color": "#3b6ea5", "penwidth": "1.2"},
    "Parameter": {"fillcolor": "#fde7c4", "color": "#c27a12", "penwidth": "2.2"},
    "internal": {"fillcolor": "#ffffff", "color": "#555555", "penwidth": "1.2"},
    "operator": {"fillcolor": "#ece6f6", "color": "#6b5b95", "penwidth": "1.2"},
    "folded": {"fillcolor": "#f2f2f2", "color": "#888888", "penwidth": "1.2"},
}
NONFINITE_COLOR = "#c00000"
STEP_COLOR = "#1a9850"
#: Ops whose inputs can be swapped without changing anything, so their edges carry no index.
SYMMETRIC_OPS: tuple[type[Operator], ...] = (AddOp, MulOp)


@dataclass(frozen=True)
class DrawOptions:
    """The settings of :func:`draw_graph` (see there)."""

    show_values: bool = True
    show_grads: bool = True
    topo_numbers: bool = False
    max_nodes: int = 200
    group_by: GroupBy = None
    rankdir: str = "TB"
    legend: bool = False


def draw_graph(
    root: Variable,
    *,
    show_values: bool = True,
    show_grads: bool = True,
    topo_numbers: bool = False,
    max_nodes: int = 200,
    group_by: str | Callable[[Variable], str | None] | None = None,
    rankdir: str = "TB",
    legend: bool = False,
) -> GraphView:
    """Draw the graph that ``root`` depends on (conventions in the module docstring).

    Args:
        root: the Variable to start from, usually the loss. Its graph must not have been released by a backward.
        show_values: print a summary of each Variable's value: the numbers when there are at most six, else
            min / mean / max (and counts of NaN and inf).
        show_grads: print each Variable's ``.grad`` the same way, for Variables that have one.
        topo_numbers: number every Variable ``#k`` with its position in ``Engine.topo_sort(root)`` (Kahn's order,
            leaves first), and every Operator ``backward step j`` with the position at which ``Engine.backward``
            runs its backward (the root's operator is step 1).
        max_nodes: beyond this many Variables, nodes are folded into summary boxes (see
            :mod:`autograd_lab.viz.folding`) and the caption says how many. Must be at least 2.
        group_by: ``"module"`` (group by the name prefix before the last dot, e.g. ``fc1`` for ``fc1.W``), or a
            function from Variable to group name (None for no group). Small graphs draw groups as labelled frames;
            beyond ``max_nodes`` each group is folded into one box. Default: no frames, and repeated chains are
            folded when the graph is too large.
        rankdir: direction of the data flow, ``"TB"`` (top to bottom), ``"LR"``, ``"BT"`` or ``"RL"``.
        legend: add a box that explains the colours.

    Returns:
        A :class:`~autograd_lab.viz.dot.GraphView` (a ``graphviz.Digraph``); rendering it needs the Graphviz ``dot``
        program and raises :class:`~autograd_lab.viz.dot.DotNotFoundError` with install instructions without it.

    Raises:
        TypeError: if ``root`` is not a Variable.
        ValueError: for an unknown ``rankdir`` or ``group_by``, or ``max_nodes < 2``.
        GraphReleasedError: if a backward without ``retain_graph=True`` already released the graph.
    """
    options = DrawOptions(show_values, show_grads, topo_numbers, max_nodes, group_by, rankdir, legend)
    return build_view(root, options)


def build_view(
    root: Variable,
    options: DrawOptions,
    grads: Mapping[Variable, np.ndarray] | None = None,
    current: Variable | None = None,
    updated: frozenset[Variable] = frozenset(),
    caption: str | None = None,
    freed: frozenset[Variable] = frozenset(),
    caption_in_picture: bool = True,
) -> GraphView:
    """Draw the graph; the backward stepper's entry point.

    ``grads`` replaces the ``.grad`` attributes as the source of gradients; ``current`` is the node whose operator
    just ran backward (drawn in green) and ``updated`` the nodes whose gradient it just changed; ``caption`` is
    printed above the drawing unless ``caption_in_picture`` is False (it is kept as the view's ``caption`` either
    way); ``freed`` nodes are drawn with "grad freed".
    """
    if not isinstance(root, Variable):
        raise TypeError(f"draw_graph expects a Variable, got {type(root).__name__}")
    if options.rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"rankdir must be 'TB', 'LR', 'BT' or 'RL', got {options.rankdir!r}")
    if options.max_nodes < 2:
        raise ValueError(f"max_nodes must be at least 2, got {options.max_nodes}")
    order = Engine.topo_sort(root)
    index = {v: k for k, v in enumerate(order)}
    step = {v: j for j, v in enumerate((v for v in reversed(order) if v.op is not None), start=1)}
    fold_of = fold_graph(order, options.max_nodes, options.group_by)
    groups = assign_groups(order, options.group_by) if options.group_by is not None and not fold_of else {}

    from autograd_lab.viz.dot import GraphView

    g = GraphView(name="autograd_graph")
    g.attr(rankdir=options.rankdir, ordering="in", fontname=FONT, fontsize="12", nodesep="0.3", ranksep="0.35")
    g.attr("node", fontname=FONT, fontsize="11", margin="0.08,0.04")
    g.attr("edge", fontname=FONT, fontsize="9", color="#555555", arrowsize="0.7")

    frames: dict[str, GraphView] = {}

    def home(v: Variable) -> GraphView:
        if v not in groups:
            return g
        name = groups[v]
        if name not in frames:
            frames[name] = GraphView(name=f"cluster_g{len(frames)}")
            frames[name].attr(label=f"<<B>{escape_label(name)}</B>>", style="rounded,dashed", color="#999999")
        return frames[name]

    def source(v: Variable) -> str:
        return fold_of[v].key if v in fold_of else f"n{index[v]}"

    n_nodes = n_edges = 0
    fold_edges: dict[tuple[str, str], None] = {}
    for v in order:
        k = index[v]
        grad = grads.get(v) if grads is not None else v.grad
        if v in fold_of:
            for p in v.parents:
                if fold_of.get(p) is not fold_of[v]:
                    fold_edges.setdefault((source(p), fold_of[v].key), None)
            continue
        kind = "Parameter" if isinstance(v, Parameter) else "leaf" if v.op is None else "internal"
        attrs = dict(STYLES[kind], shape="box", style="rounded,filled")
        bad = (options.show_values and is_nonfinite(v.data)) or (
            options.show_grads and grad is not None and is_nonfinite(grad)
        )
        if bad:
            attrs.update(color=NONFINITE_COLOR, penwidth="2.5")
        if v in updated:
            attrs.update(color=STEP_COLOR, penwidth="3")
        if v is root:
            attrs["peripheries"] = "2"
        label = _variable_label(
            v, f"n{k}", "root" if v is root and kind == "internal" else kind, grad, options, v in freed
        )
        home(v).node(f"n{k}", label=label, **attrs)
        n_nodes += 1
        op = v.op
        if op is None:
            continue
        op_attrs = dict(STYLES["operator"], shape="ellipse", style="filled")
        if type(op).training_dependent:
            op_attrs["style"] = "filled,dashed"
        if v is current:
            op_attrs.update(color=STEP_COLOR, penwidth="3", fillcolor="#d9f0d3")
        home(v).node(f"op{k}", label=_operator_label(op, step[v] if options.topo_numbers else None), **op_attrs)
        n_nodes += 1
        names = _input_names(type(op)) if len(v.parents) > 1 and not isinstance(op, SYMMETRIC_OPS) else None
        edge_attrs = {"color": STEP_COLOR, "penwidth": "2"} if v is current else {}
        for i, p in enumerate(v.parents):
            if names is not None:
                edge_attrs["label"] = f"{i}: {names[i]}" if i < len(names) else str(i)
            g.edge(source(p), f"op{k}", **edge_attrs)
        g.edge(f"op{k}", f"n{k}")
        n_edges += len(v.parents) + 1

    for frame in frames.values():
        g.subgraph(frame)
    folds = sorted({f.key: f for f in fold_of.values()}.values(), key=lambda f: int(f.key[1:]))
    for fold in folds:
        g.node(fold.key, label=_fold_label(fold), shape="folder", style="filled,dashed", **STYLES["folded"])
    for tail, head in fold_edges:
        g.edge(tail, head, style="dashed")
    n_nodes += len(folds)
    n_edges += len(fold_edges)

    summary = f"{len(order)} Variables, {n_nodes} nodes and {n_edges} edges drawn"
    lines = [caption] if caption and caption_in_picture else []
    if folds:
        n_folded = len(fold_of)
        lines.append(
            f"{n_folded:,} of {len(order):,} Variables folded into {len(folds)} box(es) (max_nodes={options.max_nodes})"
        )
        summary += f", {n_folded} Variables folded into {len(folds)} boxes"
    if lines:
        g.attr(label="<" + "<BR/>".join(escape_label(line, 200) for line in lines) + ">", labelloc="t")
    if options.legend:
        g.node("legend", label=_legend_label(), shape="plaintext")
    g.summary = summary
    g.caption = caption or ""
    return g


def _input_names(op_type: type[Operator]) -> list[str]:
    """Names of ``forward``'s positional parameters (``["a", "b"]`` for MatMul); empty for ``forward(*xs)``."""
    params = list(inspect.signature(op_type.forward).parameters.values())[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _cell(text: str, bad: bool = False, size: int | None = None, color: str | None = None) -> str:
    font = []
    if size:
        font.append(f'POINT-SIZE="{size}"')
    if bad:
        color = NONFINITE_COLOR
    if color:
        font.append(f'COLOR="{color}"')
    body = f"<FONT {' '.join(font)}>{text}</FONT>" if font else text
    background = ' BGCOLOR="#ffd9d9"' if bad else ""
    return f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"{background}>{body}</TD></TR>'


def _table(rows: list[str]) -> str:
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


def _variable_label(
    v: Variable, node_id: str, kind: str, grad: np.ndarray | None, options: DrawOptions, freed: bool = False
) -> str:
    title = f"<B>{escape_label(str(v.name))}</B>" if v.name else f'<FONT COLOR="#666666">{node_id}</FONT>'
    if options.topo_numbers:
        title += f'  <FONT COLOR="#666666" POINT-SIZE="9">topo #{node_id[1:]}</FONT>'
    shape = "scalar" if v.ndim == 0 else str(v.shape)
    kind_text = "" if kind == "internal" else f"{kind} · "
    rows = [_cell(title), _cell(f"{kind_text}{shape} {v.dtype}", size=9, color="#555555")]
    if options.show_values:
        rows.append(_cell("data " + escape_label(summarize(v.data), 400), bad=is_nonfinite(v.data)))
    if options.show_grads and grad is not None:
        rows.append(_cell("grad " + escape_label(summarize(grad), 400), bad=is_nonfinite(grad)))
    elif options.show_grads and freed:
        rows.append(_cell("<I>grad freed (passed on)</I>", color="#888888"))
    return _table(rows)


def _operator_label(op: Operator, backward_step: int | None) -> str:
    rows = [f"<B>{escape_label(type(op).__name__)}</B>"]
    rows += [
        f'<FONT POINT-SIZE="9">{escape_label(f"{k}={format_config_value(v)}")}</FONT>' for k, v in op.config().items()
    ]
    if type(op).training_dependent:
        rows.append('<FONT POINT-SIZE="9"><I>train/eval dependent</I></FONT>')
    if backward_step is not None:
        rows.append(f'<FONT POINT-SIZE="9" COLOR="#666666">backward step {backward_step}</FONT>')
    return "<" + "<BR/>".join(rows) + ">"


def _fold_label(fold: Fold) -> str:
    rows = [
        _cell(f"<B>{len(fold.members):,} nodes folded</B>"),
        _cell(escape_label(fold.title), size=9, color="#555555"),
        _cell(escape_label(fold.contents(), 120), size=9),
    ]
    return _table(rows)


def _legend_label() -> str:
    rows = []
    for kind, text in [
        ("leaf", "leaf (input, constant)"),
        ("Parameter", "Parameter (trainable leaf)"),
        ("internal", "internal node"),
        ("operator", "operator"),
        ("folded", "folded nodes"),
    ]:
        style = STYLES[kind]
        rows.append(
            f'<TR><TD BGCOLOR="{style["fillcolor"]}" BORDER="1" COLOR="{style["color"]}" WIDTH="18"> </TD>'
            f'<TD ALIGN="LEFT">{text}</TD></TR>'
        )
    rows.append(
        f'<TR><TD BGCOLOR="#ffd9d9" BORDER="1" COLOR="{NONFINITE_COLOR}"> </TD><TD ALIGN="LEFT">NaN or inf</TD></TR>'
    )
    rows.append(
        '<TR><TD><FONT COLOR="#666666">n3</FONT></TD>'
        '<TD ALIGN="LEFT">an unnamed Variable: n + its place in topological order</TD></TR>'
    )
    return (
        '<<TABLE BORDER="1" COLOR="#999999" CELLBORDER="0" CELLSPACING="3"><TR><TD COLSPAN="2"><B>legend</B></TD></TR>'
        + "".join(rows)
        + "</TABLE>>"
    )
