"""Engine: topological sort, backward and forward over a graph of Variables.

The engine keeps no graph of its own; the graph is the ``parents`` links of the Variables. All traversals are
iterative, so a chain of 100,000 nodes needs no recursion and runs in time linear in the node count.

Topological sort is Kahn's algorithm (A. B. Kahn, "Topological sorting of large networks", CACM 5(11), 1962): count,
for every node, how many input edges it has; start from the nodes with none (the leaves); repeatedly emit a ready node
and remove its outgoing edges. Nodes left over at the end lie on a cycle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.config import Config
from autograd_lab.errors import CycleError, GraphReleasedError, ShapeError
from autograd_lab.gradients import add_gradient, needed_inputs, store_leaf_grads

if TYPE_CHECKING:
    from autograd_lab.variable import Variable


class _ModesOnConfig(type):
    """Lets ``Engine.is_training`` (and the other names of ``Config.ENGINE_NAMES``) read and write
    :class:`~autograd_lab.config.Config`, where the modes live; the notebooks and older code use these names."""

    def __getattr__(cls, name: str) -> Any:
        if name in Config.ENGINE_NAMES:
            return getattr(Config, name)
        raise AttributeError(f"type object 'Engine' has no attribute {name!r}")

    def __setattr__(cls, name: str, value: Any) -> None:
        if name in Config.ENGINE_NAMES:
            setattr(Config, name, value)
        else:
            super().__setattr__(name, value)


class Engine(metaclass=_ModesOnConfig):
    """Static methods that walk the graph.

    The global modes live in :class:`autograd_lab.config.Config` (switched with the context managers in
    :mod:`autograd_lab.modes`); ``Engine.grad_enabled``, ``Engine.is_training``, ``Engine.detect_anomaly`` and
    ``Engine.recorder`` read and write the same attributes.
    """

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

        # With inputs=, `needs` maps each node on the way to a wanted leaf to which of its inputs need a gradient;
        # other nodes are skipped. Without, every input of every node does.
        wanted = None if inputs is None else set(inputs)
        needs = None if wanted is None else needed_inputs(order, wanted)

        # Leaves' gradients are collected in `leaf_grads` and written only once the whole pass has succeeded, so a
        # backward that raises part-way leaves every .grad as it was. `summed` counts the gradients each node has
        # received so far (add_gradient's rule depends on it).
        leaf_grads: dict[Variable, np.ndarray] = {}
        summed: dict[Variable, int] = {root: 1}
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
                node_needs = None
                if needs is not None:
                    node_needs = needs.get(node)
                    if node_needs is None:  # no wanted leaf lies below it
                        gy = None
                if gy is None:
                    if not retain_graph:
                        _release(node)
                    continue
                op.check_versions(parents)
                grads = op.run_backward(gy, node_needs)  # None for every input whose gradient is not needed
                if not retain_graph:
                    _release(node)
                for parent, g in zip(parents, grads):
                    if g is None:
                        continue
                    n = summed.get(parent, 0)
                    summed[parent] = n + 1
                    if parent._op is None:  # a leaf (speed: read directly, this loop runs once per edge)
                        leaf_grads[parent] = add_gradient(leaf_grads.get(parent), g, n)
                    else:
                        parent.grad = add_gradient(parent.grad, g, n)
        except BaseException:
            for node in order:
                if not node.is_leaf:
                    node.grad = None  # partial sums must not survive into a retry
            raise
        # Sums (two or more gradients) and a leaf root's seed are arrays this pass made.
        store_leaf_grads(leaf_grads, [leaf for leaf in leaf_grads if summed[leaf] > 1 or leaf is root])

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
                node._data = op.run_forward(tuple([p._data for p in node._parents]))
                node._version += 1
                op.watch_versions(node._parents)
                node.grad = None
        return root


def _release(node: Variable) -> None:
    """Drop what the graph holds at ``node``: its op's saved values and its links to the parents."""
    node._op.release()  # type: ignore[union-attr]  # only internal nodes are released
    node._parents = []
    node._released = True


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
