"""Chapter 03 (engine): plausible wrong answers to topo_sort, backward and zero_grad."""

from ..spec import Mutant

_RECURSIVE_TOPO = '''def topo_sort(root: Variable) -> list[Variable]:
    """Every node of root's graph once, each after all its parents (leaves first, root last).

    Raises:
        RuntimeError: if the parents links form a cycle.
    """
    order, done, active = [], set(), set()

    def visit(node):
        if node in done:
            return
        if node in active:
            raise RuntimeError("the graph has a cycle")
        active.add(node)
        for parent in node.parents:
            visit(parent)
        active.discard(node)
        done.add(node)
        order.append(node)

    visit(root)
    return order
'''

_ZERO_PRUNED = '''def zero_grad(root: Variable) -> None:
    """Set .grad to None on every node of root's graph."""
    stack, seen = [root], {root}
    while stack:
        node = stack.pop()
        if node.grad is None:
            continue  # "already zero": nothing below it to clear
        node.grad = None
        for parent in node.parents:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
'''

_ZERO_SHARED_DEFAULT = '''def zero_grad(root: Variable, seen: set = set()) -> None:
    """Set .grad to None on every node of root's graph."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        node.grad = None
        stack.extend(node.parents)
'''

_ZERO_PARENTS_ONLY = '''def zero_grad(root: Variable) -> None:
    """Set .grad to None on every node of root's graph."""
    root.grad = None
    for parent in root.parents:
        parent.grad = None
'''

MUTANTS = [
    # topo_sort
    Mutant("topo_sort_code", "recursive depth-first search", source=_RECURSIVE_TOPO, says=r"recursion"),
    Mutant("topo_sort_code", "no cycle check",
           edits=[("    if len(order) != len(nodes):\n        raise", "    if False:\n        raise")], says=r"cycle"),
    Mutant("topo_sort_code", "an input used twice is one consumer (in-degree counts it twice)",
           edits=[("            consumers[parent].append(node)",
                   "            if node not in consumers[parent]:\n                consumers[parent].append(node)")],
           says=r"twice"),
    Mutant("topo_sort_code", "order returned reversed (root first)", edits=[("    return order", "    return order[::-1]")],
           says=r"root must come last|revers"),
    Mutant("topo_sort_code", "no seen set: a node reached along two paths is walked twice",
           edits=[("            if parent not in seen:", "            if True:")], says=r"two paths|already seen"),
    Mutant("topo_sort_code", "queue started from the root instead of the leaves",
           edits=[("queue = deque(node for node in nodes if indegree[node] == 0)", "queue = deque([root])")],
           says=r"every leaf.*queue"),
    Mutant("topo_sort_code", "queue started from one leaf only",
           edits=[("queue = deque(node for node in nodes if indegree[node] == 0)", "queue = deque([nodes[-1]])")],
           says=r"every leaf.*queue"),
    Mutant("topo_sort_code", "returns a deque", edits=[("    order = []", "    order = deque()")], says=r"return a list"),
    Mutant("topo_sort_code", "raises ValueError on a cycle",
           edits=[("raise RuntimeError(", "raise ValueError(")], says=r"should raise RuntimeError, it raised ValueError"),
    # backward
    Mutant("backward_code", "= instead of += for a second contribution",
           edits=[("                parent.grad += g", "                parent.grad = g")], says=r"added|\+="),
    Mutant("backward_code", "first gradient stored without a copy (aliasing)",
           edits=[("parent.grad = np.array(g, dtype=parent.dtype, copy=True)", "parent.grad = g")],
           says=r"copy|same array"),
    Mutant("backward_code", "float64 seed np.ones(root.shape), gradients not cast",
           edits=[("    else:\n        root.grad = np.ones_like(root.data)", "    else:\n        root.grad = np.ones(root.shape)"),
                  ("parent.grad = np.array(g, dtype=parent.dtype, copy=True)", "parent.grad = np.array(g, copy=True)")],
           says=r"float32|dtype"),
    Mutant("backward_code", "seed is a scalar 1 whatever the root's shape",
           edits=[("    else:\n        root.grad = np.ones_like(root.data)",
                   "    else:\n        root.grad = np.array(1.0, dtype=root.dtype)")],
           says=r"root's shape|ones_like"),
    Mutant("backward_code", "an internal node whose gradient is None is not skipped",
           edits=[("        if node.is_leaf or node.grad is None:", "        if node.is_leaf:")], says=r"gradient of None|must be skipped"),
    Mutant("backward_code", "a None returned by an operator is not skipped",
           edits=[("            if g is None:\n                continue\n", "")], says=r"'no gradient': skip it"),
    Mutant("backward_code", "goes through the base class's checked Operator.run_backward, which refuses a None",
           edits=[("node.op.backward(node.grad)", "node.op.run_backward(node.grad)")], says=r"run_backward"),
    Mutant("backward_code", "internal gradients not reset to None",
           edits=[("        node.grad = None\n", "")], says=r"reset"),
    Mutant("backward_code", "a leaf's gradient from an earlier call is overwritten",
           edits=[("                parent.grad = parent.grad + g", "                parent.grad = np.array(g, copy=True)")],
           says=r"ADD to the leaf's gradient"),
    Mutant("backward_code", "nodes visited in topological order, not reversed",
           edits=[("    for node in reversed(order):", "    for node in order:")], says=r"revers"),
    Mutant("backward_code", "gradients sent to the parents in reverse order",
           edits=[("zip(node.parents, grads)", "zip(reversed(node.parents), grads)")], says=r"order of node\.parents|wrong parent"),
    # zero_grad
    Mutant("zero_grad_code", "only the leaves are zeroed",
           edits=[("        node.grad = None", "        if node.is_leaf:\n            node.grad = None")],
           says=r"root's own"),
    Mutant("zero_grad_code", "only the internal nodes are zeroed",
           edits=[("        node.grad = None", "        if not node.is_leaf:\n            node.grad = None")],
           says=r"reach the leaves"),
    Mutant("zero_grad_code", "arrays of zeros instead of None",
           edits=[("        node.grad = None", "        node.grad = np.zeros_like(node.data)")], says=r"not to zeros"),
    Mutant("zero_grad_code", "only the root and its direct parents",
           source=_ZERO_PARENTS_ONLY, says=r"deep|whole graph"),
    Mutant("zero_grad_code", "walk stops at a node whose gradient is already None", source=_ZERO_PRUNED,
           says=r"already None"),
    Mutant("zero_grad_code", "a mutable default argument remembers the nodes of earlier calls",
           source=_ZERO_SHARED_DEFAULT, says=r"mutable default"),
]
