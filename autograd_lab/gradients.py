"""The rules every backward pass follows, in one place.

Three walks run backward: the eager one (:meth:`autograd_lab.Engine.backward`), replay's checked loop
(:meth:`autograd_lab.capture.Replay.run_checked`) and the generated replay (:mod:`autograd_lab.capture.pycode`, whose
text calls these functions). They share, and must never restate:

* :func:`needed_inputs`: which inputs of which node need a gradient, for a backward that wants some leaves only;
* :func:`add_gradient`: how the gradients reaching one node are summed;
* :func:`store_leaf_grads`: how the leaves receive theirs at the end of a pass.

The fourth shared rule, how an op's backward result is checked, is :meth:`autograd_lab.Operator.run_backward`.
Because all three walks sum in the same order with the same function, their results are bit-identical.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from autograd_lab.errors import ShapeError

if TYPE_CHECKING:
    from autograd_lab.variable import Variable


def add_gradient(total: np.ndarray | None, g: np.ndarray, n_summed: int) -> np.ndarray:
    """Return ``total + g``, where ``total`` already holds ``n_summed`` gradients (None when 0).

    The first gradient is stored as received: it may be shared with another node (``AddOp`` hands the same ``gy`` to
    both inputs) or read-only, so it is never written. The second makes a new array, which the pass then owns;
    later ones are added into it in place. Summation follows the order the walk visits the consumers, so every
    walk that calls this in the same order gets the same bits.

    Args:
        total: the sum so far, or None. g: one more gradient, of the same shape and dtype.
        n_summed: how many gradients ``total`` holds (0, 1, or more).
    """
    if n_summed == 0:
        return g
    if n_summed == 1:
        return np.asarray(total + g)  # 0-d + 0-d gives a NumPy scalar
    total += g  # type: ignore[operator]  # n_summed > 0: total is an array
    return total  # type: ignore[return-value]


def needed_inputs(order: Sequence[Variable], wanted: Iterable[Variable]) -> dict[Variable, tuple[bool, ...]]:
    """For a backward that wants the gradients of some leaves only: which inputs of each node need one.

    A node is on the way to a wanted leaf if one of its parents is a wanted leaf or on the way itself. Such a node
    maps to one flag per parent (True: compute that gradient); every other node is left out (backward skips it).

    Args:
        order: the graph's nodes, root first, each before its parents (:meth:`Engine.backward_order`).
        wanted: the leaves whose gradients are wanted.

    Raises:
        ValueError: if an item of ``wanted`` is not a leaf.
    """
    on_the_way = set(wanted)
    not_leaves = [v for v in on_the_way if not v.is_leaf]
    if not_leaves:
        raise ValueError(f"backward(inputs=...) takes leaves only; {not_leaves[0]!r} is not a leaf")
    needs: dict[Variable, tuple[bool, ...]] = {}
    for node in reversed(order):  # leaves first, so a node's parents are decided before it
        flags = tuple([parent in on_the_way for parent in node.parents])
        if True in flags:
            needs[node] = flags
            on_the_way.add(node)
    return needs


def store_leaf_grads(grads: dict[Variable, np.ndarray], fresh: Collection[Variable]) -> None:
    """Add a pass's gradients into the leaves' ``.grad``, each leaf getting a private, writable array.

    A gradient stored as received (see :func:`add_gradient`) may be read-only, a view, or the very array another
    leaf got; those are copied (optimizers and clipping update ``.grad`` in place). Every existing ``.grad`` is
    checked first, so that a bad one (wrong shape or dtype, set by hand) raises before any leaf is changed.

    Args:
        grads: each leaf's gradient from this pass (same shape as the leaf).
        fresh: leaves whose array this pass made (a sum, or the seed of a leaf root): never shared, never copied.

    Raises:
        ShapeError: if a leaf's existing ``.grad`` cannot take the new gradient.
    """
    if any(leaf.grad is not None for leaf in grads):  # only then can an existing .grad be unfit
        _check_existing_grads(grads)
    seen: set[int] = set()
    for leaf, g in grads.items():
        old = leaf.grad
        if old is not None:
            if old.flags.writeable:
                old += g
            else:
                leaf.grad = np.asarray(old + g)
            continue
        if leaf not in fresh and (g.base is not None or id(g) in seen or not g.flags.writeable):
            g = g.copy()
        seen.add(id(g))
        leaf.grad = g


def _check_existing_grads(grads: dict[Variable, np.ndarray]) -> None:
    """Raise ShapeError if a leaf's existing ``.grad`` cannot take the new gradient (see :func:`store_leaf_grads`)."""
    for leaf, g in grads.items():
        old = leaf.grad
        if old is not None and (
            not isinstance(old, np.ndarray) or old.shape != g.shape or not np.can_cast(g.dtype, old.dtype, "same_kind")
        ):
            described = f"shape {old.shape}, dtype {old.dtype}" if isinstance(old, np.ndarray) else type(old).__name__
            raise ShapeError(
                f"{leaf!r} already has a .grad ({described}) that a gradient of shape {g.shape}, dtype {g.dtype} "
                "cannot be added to; set .grad = None before backward"
            )
