"""Engine: topological sort, backward and forward over a graph of Variables.

The engine keeps no graph of its own; the graph is the ``parents`` links of the Variables. All traversals are
iterative, so a chain of 100,000 nodes needs no recursion and runs in time linear in the node count.

Topological sort is Kahn's algorithm (A. B. Kahn, "Topological sorting of large networks", CACM 5(11), 1962): count,
for every node, how many input edges it has; start from the nodes with none (the leaves); repeatedly emit a ready node
and remove its outgoing edges. Nodes left over at the end lie on a cycle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.errors import CycleError, GraphReleasedError, ShapeError

if TYPE_CHECKING:
    from autograd_lab.variable import Variable

# The `_needs` of an op whose every input wants its gradient (zip stops at the inputs' count).
_ALL = repeat(True)


class Engine:
    """Static methods that walk the graph, plus the global modes.

    Class attributes (switched with the context managers in :mod:`autograd_lab.modes`):
        grad_enabled: when False (inside ``no_grad()``), operators record no graph.
        is_training: when False (inside ``eval_mode()``), dropout is the identity.
        detect_anomaly: when True, the first NaN/inf in a forward value or gradient raises AnomalyError.
        recorder: while :func:`autograd_lab.capture.capture` runs, called by every operator call with
            ``(op, input_variables, output_variable)``; None otherwise.
    """

    grad_enabled: bool = True
    is_training: bool = True
    detect_anomaly: bool = False
    recorder: Callable[[Any, Any, Any], None] | None = None

    @staticmethod
    def topo_sort(root: Variable) -> list[Variable]:
        """Return every node that ``root`` depends on, each once: leaves first, every node after its parents,
        ``root`` last.

        Kahn's algorithm as in the textbook: a node's in-degree is its number of parents (an input used twice counts
        twice); all leaves (in-degree 0) start in a first-in first-out queue, so they come first; each emitted node
        lowers its consumers' counts, and a consumer whose count reaches 0 joins the queue. Iterative and
        deterministic. :meth:`backward` uses the mirror image, :meth:`backward_order`.

        Raises:
            GraphReleasedError: if a node on the way was released by an earlier backward.
            CycleError: if the ``parents`` links form a cycle.
        """
        nodes = _reachable(root)
        indegree = {node: len(node._parents) for node in nodes}
        consumers: dict[Variable, list[Variable]] = {node: [] for node in nodes}
        for node in nodes:
            for parent in node._parents:
                consumers[parent].append(node)
        # Leaves in reverse discovery order, which for a forward pass is roughly the order they were used.
        queue = deque(node for node in reversed(nodes) if not node._parents)
        order: list[Variable] = []
        while queue:
            node = queue.popleft()
            order.append(node)
            for consumer in consumers[node]:
                indegree[consumer] -= 1
                if indegree[consumer] == 0:
                    queue.append(consumer)
        if len(order) != len(nodes):
            raise _cycle_error(indegree, root)
        return order

    @staticmethod
    def backward_order(root: Variable) -> list[Variable]:
        """Return the nodes in the order backward visits them: ``root`` first, each node after all its consumers.

        Kahn's algorithm on the graph seen from the root: a node's in-degree is the number of edges from the nodes
        that consume it (an input used twice by one op counts twice). A node becomes ready once every consumer has
        been emitted, which is exactly when its gradient is complete. Iterative and deterministic (parents are
        visited in input order).

        Raises:
            GraphReleasedError: if a node on the way was released by an earlier backward.
            CycleError: if the ``parents`` links form a cycle.
        """
        # 1. Find every node reachable through parents, counting for each how many edges come from its consumers.
        consumers: dict[Variable, int] = {root: 0}
        stack = [root]
        while stack:
            node = stack.pop()
            if node._released:
                raise _released_error(node)
            for parent in node._parents:
                if parent in consumers:
                    consumers[parent] += 1
                else:
                    consumers[parent] = 1
                    stack.append(parent)
        # 2. Kahn's algorithm: emit a node once all its consumers are emitted.
        if consumers[root]:
            raise _cycle_error(consumers, root)
        order: list[Variable] = []
        ready = deque([root])
        while ready:
            node = ready.popleft()
            order.append(node)
            for parent in node._parents:
                consumers[parent] -= 1
                if consumers[parent] == 0:
                    ready.append(parent)
        if len(order) != len(consumers):
            raise _cycle_error(consumers, root)
        return order

    @staticmethod
    def backward(
        root: Variable,
        grad: Any = None,
        retain_graph: bool = False,
        inputs: Iterable[Variable] | None = None,
    ) -> None:
        """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that ``root`` depends on.

        Nodes are visited in reverse topological order (:meth:`backward_order`); each operator's gradients are added
        into its parents' ``.grad`` with ``+=``, so a node used twice receives the sum of both paths. Leaves keep
        their gradients (adding to any gradient already there); internal nodes' gradients are freed as soon as they
        have been passed on.

        Args:
            root: the node to differentiate, usually the scalar loss.
            grad: d(something)/d(root), shape ``root.shape``; defaults to 1 for a one-element root.
            retain_graph: keep the graph so that backward or :meth:`forward` can run again. When False the graph is
                released as it is walked: each node keeps its ``op`` (so ``is_leaf`` stays False), but the op drops
                the values it saved, the node's ``parents`` become ``[]`` and ``is_released`` becomes True, so the
                graph's memory is reclaimed.
            inputs: if given, only these leaves receive gradients and work not needed for them is skipped
                (for example the gradient with respect to the input batch).

        Raises:
            ShapeError: if ``grad`` is missing for a root with more than one element, or has the wrong shape.
            GraphReleasedError: if the graph was released by an earlier backward.
            CycleError, InPlaceModificationError, AnomalyError: see :mod:`autograd_lab.errors`.
        """
        order = Engine.backward_order(root)
        if grad is None:
            if root.size != 1:
                raise ShapeError(
                    f"backward needs grad= for a root of shape {root.shape}; only a one-element root is seeded with 1"
                )
            seed = np.ones(root.shape, dtype=root.dtype)  # a fresh array, never a view: a leaf root keeps it
        else:
            seed = np.array(grad, dtype=root.dtype, copy=True)
            if seed.shape != root.shape:
                raise ShapeError(f"grad has shape {seed.shape}, but the root has shape {root.shape}")

        # With inputs=, each op's `_needs` says which of its inputs lead to a wanted leaf; without, every input does.
        wanted = None if inputs is None else _mark_needed(order, inputs)

        # Leaves' gradients are collected in `leaf_grads` and written only once the whole pass has succeeded, so a
        # backward that raises part-way leaves every .grad as it was. A gradient stored as received may be shared
        # with another node, so `+=` only goes into arrays in `owned`, which this pass created.
        leaf_grads: dict[Variable, np.ndarray] = {}
        owned: set[Variable] = {root}
        if root.is_leaf:
            if wanted is None or root in wanted:
                leaf_grads[root] = seed
        else:
            root.grad = seed
        try:
            for node in order:
                op = node._op
                if op is None:  # a leaf: it only receives gradients
                    continue
                parents, gy = node._parents, node.grad
                node.grad = None
                if wanted is None:
                    op._needs = None
                if gy is None or (wanted is not None and node not in wanted):
                    if not retain_graph:
                        _release(node)
                    continue
                grads = op._run_backward(gy, parents)
                if not retain_graph:
                    _release(node)
                # Ops may compute gradients nobody asked for: only the inputs in `needs` receive theirs. (Speed: this
                # loop runs once per edge of the graph, so it reads `_needs` and `_op` directly instead of calling
                # needs_grad(i) and is_leaf.)
                needs = op._needs or _ALL
                for parent, g, need in zip(parents, grads, needs):
                    if g is None or not need:
                        continue
                    if parent._op is None:  # a leaf
                        leaf_grads[parent] = _sum(leaf_grads.get(parent), g, parent, owned)
                    else:
                        parent.grad = _sum(parent.grad, g, parent, owned)
        except BaseException:
            for node in order:
                if not node.is_leaf:
                    node.grad = None  # partial sums must not survive into a retry
            raise
        _store_leaf_grads(leaf_grads, owned)

    @staticmethod
    def forward(root: Variable) -> Variable:
        """Recompute every internal node from the current leaf values, in topological order; return ``root``.

        Use it to re-run a graph built once with placeholder leaves: assign ``x.data = batch``, then
        ``Engine.forward(loss)``. Dropout draws a new mask on each run (in training mode).

        Each recomputed node's version goes up, so that an operator outside this graph that saved the old value
        (a second loss sharing a subgraph, say) refuses to run backward instead of mixing old and new values.

        Raises:
            GraphReleasedError: if the graph was released by a backward without ``retain_graph=True``.
        """
        for node in Engine.topo_sort(root):
            op = node._op
            if op is not None:
                node._data = op._run_forward(tuple([p._data for p in node._parents]))
                node._version += 1
                op._versions = [p._version for p in node._parents]
                node.grad = None
        return root


def _release(node: Variable) -> None:
    """Drop what the graph holds at ``node``: its op's saved values and its links to the parents."""
    node._op._release()  # type: ignore[union-attr]  # only internal nodes are released
    node._parents = []
    node._released = True


def _sum(current: np.ndarray | None, g: np.ndarray, node: Variable, owned: set[Variable]) -> np.ndarray:
    """``current + g``: in place only into an array this pass created (``owned``), else into a new array."""
    if current is None:
        return g
    if node in owned:
        current += g
        return current
    owned.add(node)
    return np.asarray(current + g)  # 0-d + 0-d gives a NumPy scalar


def _reachable(root: Variable) -> list[Variable]:
    """Every node reachable from ``root`` through ``parents``, each once, in breadth-first order."""
    nodes = [root]
    seen = {root}
    i = 0
    while i < len(nodes):
        node = nodes[i]
        i += 1
        if node._released:
            raise _released_error(node)
        for parent in node._parents:
            if parent not in seen:
                seen.add(parent)
                nodes.append(parent)
    return nodes


def _released_error(node: Variable) -> GraphReleasedError:
    return GraphReleasedError(
        f"{node!r} belongs to a graph that an earlier Engine.backward released; build the graph again "
        "(run the forward pass), or pass retain_graph=True to the first backward"
    )


def _cycle_error(counts: dict[Variable, int], root: Variable) -> CycleError:
    """Name the nodes of one real cycle among those Kahn's algorithm could not emit (error path only).

    Nodes merely downstream or upstream of a cycle are blocked too, so a cycle is searched for explicitly: an
    iterative depth-first walk along ``parents`` inside the blocked set; meeting a node that is still on the walk's
    path closes a cycle.
    """
    blocked = {node for node, n in counts.items() if n > 0} | {root}
    done: set[Variable] = set()
    for start in blocked:
        if start in done:
            continue
        path = [start]
        on_path = {start: 0}
        branches = [iter([p for p in start._parents if p in blocked])]
        while branches:
            parent = next(branches[-1], None)
            if parent is None:
                finished = path.pop()
                del on_path[finished]
                done.add(finished)
                branches.pop()
            elif parent in on_path:
                cycle = path[on_path[parent]:]
                return CycleError(
                    f"the graph has a cycle of {len(cycle)} node(s) through {cycle[0]!r}; a node cannot be its own "
                    "ancestor (were .parents edited by hand?)"
                )
            elif parent not in done:
                on_path[parent] = len(path)
                path.append(parent)
                branches.append(iter([p for p in parent._parents if p in blocked]))
    return CycleError("the graph has a cycle (were .parents edited by hand?)")


def _mark_needed(order: list[Variable], inputs: Iterable[Variable]) -> set[Variable]:
    """For ``backward(inputs=...)``: set each op's ``_needs`` (which inputs need a gradient) and return the wanted
    nodes, the given leaves and every node with one of them below it.

    Raises:
        ValueError: if an item of ``inputs`` is not a leaf.
    """
    wanted = set(inputs)
    not_leaves = [v for v in wanted if not v.is_leaf]
    if not_leaves:
        raise ValueError(f"backward(inputs=...) takes leaves only; {not_leaves[0]!r} is not a leaf")
    for node in reversed(order):  # leaves first, so a node's parents are decided before it
        op = node._op
        if op is not None:
            op._needs = needs = tuple([parent in wanted for parent in node._parents])
            if True in needs:
                wanted.add(node)
    return wanted


def _store_leaf_grads(grads: dict[Variable, np.ndarray], owned: set[Variable]) -> None:
    """Add this pass's gradients into the leaves' ``.grad``, each leaf getting a private, writable array.

    A gradient stored as received may be read-only, a view, or the very array another leaf got; those are copied
    (optimizers and clipping update ``.grad`` in place). Every existing ``.grad`` is checked first, so that a bad one
    (wrong shape or dtype, set by hand) raises before any leaf is changed.

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
        # A view, an array already handed out to another leaf, or a read-only array is copied.
        if leaf not in owned and (g.base is not None or id(g) in seen or not g.flags.writeable):
            g = g.copy()
        seen.add(id(g))
        leaf.grad = g


def _check_existing_grads(grads: dict[Variable, np.ndarray]) -> None:
    """Raise ShapeError if a leaf's existing ``.grad`` cannot take the new gradient (see :func:`_store_leaf_grads`)."""
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
