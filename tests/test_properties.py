"""Property-based tests (hypothesis): random graphs of random ops and broadcastable shapes.

For every generated graph: the engine's gradients agree with central differences (gradcheck), the topological order is
valid (each reachable node once, parents before children, root last), and a second backward with retain_graph doubles
every leaf gradient. Operands are drawn with replacement, so graphs with duplicated parents (x·x) are common.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autograd_lab import Engine, Operator, Variable, gradcheck
from autograd_lab.ops import (
    AddOp,
    MaxOp,
    MeanOp,
    MulOp,
    NegOp,
    PowOp,
    ReLUOp,
    SigmoidOp,
    SubOp,
    SumOp,
    TanhOp,
)

LEAF_SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]

UNARY: dict[str, Callable[[tuple[int, ...]], Operator]] = {
    "tanh": lambda shape: TanhOp(),
    "sigmoid": lambda shape: SigmoidOp(),
    "neg": lambda shape: NegOp(),
    "square": lambda shape: PowOp(2.0),
    "relu": lambda shape: ReLUOp(),
    "sum": lambda shape: SumOp(),
    "mean_last": lambda shape: MeanOp(axis=-1, keepdims=True) if shape else MeanOp(),
    "max_first": lambda shape: MaxOp(axis=0, keepdims=True) if shape else MaxOp(),
}
BINARY: dict[str, Callable[[], Operator]] = {"add": AddOp, "sub": SubOp, "mul": MulOp}


@dataclass(frozen=True)
class Program:
    """Leaves, then steps (op name, operand indices into the list of nodes made so far)."""

    leaf_values: tuple[np.ndarray, ...]
    steps: tuple[tuple[str, int, int], ...]

    def run(self, *leaves: Variable) -> Variable:
        nodes = list(leaves)
        for name, i, j in self.steps:
            if name in BINARY:
                nodes.append(BINARY[name]()(nodes[i], nodes[j]))
            else:
                nodes.append(UNARY[name](nodes[i].shape)(nodes[i]))
        return SumOp()(nodes[-1])


@st.composite
def programs(draw: st.DrawFn) -> Program:
    n_leaves = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shapes = [draw(st.sampled_from(LEAF_SHAPES)) for _ in range(n_leaves)]
    leaf_values = tuple(rng.uniform(-1.5, 1.5, size=shape) for shape in shapes)
    steps = []
    for k in range(draw(st.integers(1, 7))):
        n_nodes = n_leaves + k
        name = draw(st.sampled_from(sorted(UNARY) + sorted(BINARY)))
        steps.append((name, draw(st.integers(0, n_nodes - 1)), draw(st.integers(0, n_nodes - 1))))
    return Program(leaf_values, tuple(steps))


def build(program: Program) -> tuple[list[Variable], Variable]:
    leaves = [Variable.from_numpy(v) for v in program.leaf_values]
    return leaves, program.run(*leaves)


def reachable(root: Variable) -> set[int]:
    """Every node the root depends on, by a plain depth-first walk (an oracle independent of Kahn's algorithm)."""
    seen, stack = {id(root)}, [root]
    while stack:
        for parent in stack.pop().parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return seen


DUPLICATED_PARENTS = Program(
    (np.array([0.3, -0.7, 1.1]), np.array([[0.5], [-0.2]])),
    (("mul", 0, 0), ("add", 2, 0), ("mul", 3, 1), ("sub", 4, 4), ("tanh", 5, 5), ("mul", 6, 6)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
@example(program=DUPLICATED_PARENTS)
def test_random_graph_gradients_match_central_differences(program):
    gradcheck(program.run, list(program.leaf_values))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
@example(program=DUPLICATED_PARENTS)
def test_random_graph_topological_order_is_valid(program):
    _, root = build(program)
    order = Engine.topo_sort(root)
    ids = [id(v) for v in order]
    assert len(ids) == len(set(ids)), "a node appears twice"
    assert set(ids) == reachable(root)
    assert order[-1] is root and all(v.is_leaf for v in order[: sum(v.is_leaf for v in order)])
    position = {id(v): i for i, v in enumerate(order)}
    for node in order:
        assert all(position[id(p)] < position[id(node)] for p in node.parents)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
def test_random_graph_second_backward_with_retain_graph_doubles_the_gradients(program):
    leaves, root = build(program)
    Engine.backward(root, retain_graph=True)
    first = [None if v.grad is None else v.grad.copy() for v in leaves]
    Engine.backward(root)
    for g1, v in zip(first, leaves):
        if g1 is None:
            assert v.grad is None
        else:
            np.testing.assert_allclose(v.grad, 2 * g1, rtol=1e-15)
