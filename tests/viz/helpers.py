"""Shared helpers for the viz tests: small graphs built directly from ops, and a reader for our DOT output."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import numpy as np

from autograd_lab import Parameter, Variable
from autograd_lab.ops import AddOp, MatMulOp, ReLUOp, SoftmaxCrossEntropyOp

_NODE = re.compile(r"^\s*(\w+) \[(label=.*)\]$")
_EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?$")


@dataclass
class Dot:
    """The nodes (id -> attribute text) and edges ((tail, head, attribute text), in file order) of a DOT source."""

    nodes: dict[str, str]
    edges: list[tuple[str, str, str]]

    def edge_labels(self, head: str) -> list[tuple[str, str]]:
        """(tail, label) of the edges into ``head``, in file order."""
        return [(t, attr(a, "label")) for t, h, a in self.edges if h == head]


def attr(attrs: str, key: str) -> str:
    """The value of ``key`` in an attribute list such as ``color="#c00000" penwidth=2.5`` ('' when absent)."""
    m = re.search(rf'(?:^|\s){key}=("(?:[^"\\]|\\.)*"|[^ \]]+)', attrs)
    return "" if m is None else m.group(1).strip('"')


def parse_dot(source: str) -> Dot:
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in source.splitlines():
        if m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3) or ""))
        elif m := _NODE.match(line):
            nodes[m.group(1)] = m.group(2)
    return Dot(nodes, edges)


@dataclass
class MLP:
    x: Variable
    labels: Variable
    W1: Parameter
    b1: Parameter
    W2: Parameter
    b2: Parameter
    loss: Variable


def build_mlp(seed: int = 0) -> MLP:
    """A 3-5-2 MLP on a batch of 4, built directly from ops: MatMul, Add, ReLU, MatMul, Add, SoftmaxCrossEntropy."""
    rng = np.random.default_rng(seed)
    x = Variable.from_numpy(rng.normal(size=(4, 3)), name="x")
    labels = Variable.from_numpy(np.array([0, 1, 1, 0]), name="labels")
    W1 = Parameter(rng.normal(size=(3, 5)), name="fc1.W")
    b1 = Parameter(rng.normal(size=5) * 0.1, name="fc1.b")
    W2 = Parameter(rng.normal(size=(5, 2)), name="fc2.W")
    b2 = Parameter(rng.normal(size=2) * 0.1, name="fc2.b")
    h = ReLUOp()(AddOp()(MatMulOp()(x, W1), b1))
    loss = SoftmaxCrossEntropyOp()(AddOp()(MatMulOp()(h, W2), b2), labels)
    return MLP(x, labels, W1, b1, W2, b2, loss)


def html_label(attrs: str) -> str:
    """The HTML-like label of a node (the text between the outer ``<`` and ``>`` of ``label=<...>``)."""
    start = attrs.index("label=<") + len("label=")
    depth = 0
    for i in range(start, len(attrs)):
        depth += {"<": 1, ">": -1}.get(attrs[i], 0)
        if depth == 0:
            return attrs[start + 1 : i]
    raise ValueError(f"unbalanced label in {attrs!r}")


def visible_text(label: str) -> str:
    """The text a reader sees in an HTML-like label: tags dropped, <BR/> as newline, entities decoded."""

    return html.unescape(re.sub(r"<[^>]*>", "", label.replace("<BR/>", "\n").replace("</TR>", "\n"))).strip()
