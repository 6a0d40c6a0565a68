"""Chapter 03 (engine): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("topo_sort_code", "Kahn's algorithm run from the root over use counts, then reversed",
                source='''def topo_sort(root: Variable) -> list[Variable]:
    """Every node of root's graph once, each after all its parents (leaves first, root last).

    Raises:
        RuntimeError: if the parents links form a cycle.
    """
    users = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        for parent in node.parents:
            if parent in users:
                users[parent] += 1
            else:
                users[parent] = 1
                stack.append(parent)
    ready = deque(node for node, n in users.items() if n == 0)
    backwards = []
    while ready:
        node = ready.popleft()
        backwards.append(node)
        for parent in node.parents:
            users[parent] -= 1
            if users[parent] == 0:
                ready.append(parent)
    if len(backwards) != len(users):
        raise RuntimeError("cycle in the graph")
    backwards.reverse()
    return backwards
'''),
    Alternative("topo_sort_code", "Kahn's algorithm with ids as keys and a LIFO list instead of a FIFO queue",
                source='''def topo_sort(root: Variable) -> list[Variable]:
    """Every node of root's graph once, each after all its parents (leaves first, root last).

    Raises:
        RuntimeError: if the parents links form a cycle.
    """
    node_of = {id(root): root}
    users_of = {id(root): []}
    todo = [root]
    while todo:
        node = todo.pop()
        for parent in node.parents:
            if id(parent) not in node_of:
                node_of[id(parent)] = parent
                users_of[id(parent)] = []
                todo.append(parent)
            users_of[id(parent)].append(node)
    waiting = {k: len(v.parents) for k, v in node_of.items()}
    ready = [v for k, v in node_of.items() if waiting[k] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for user in users_of[id(node)]:
            waiting[id(user)] -= 1
            if waiting[id(user)] == 0:
                ready.append(user)
    if len(order) < len(node_of):
        raise RuntimeError(f"cycle: {len(node_of) - len(order)} nodes could not be ordered")
    return order
'''),
    Alternative("backward_code", "gradients kept in a dict, never in internal .grad; new arrays only, leaves "
                "get copies at the end",
                source='''def backward(root: Variable) -> None:
    """Accumulate d(sum of root's entries)/d(leaf) into leaf.grad for every leaf of root's graph."""
    order = topo_sort(root)
    pending = {root: np.ones(root.data.shape, dtype=root.data.dtype)}
    for node in order[::-1]:
        if node.is_leaf or node not in pending:
            continue
        for parent, g in zip(node.parents, node.op.backward(pending.pop(node))):
            if g is not None:
                pending[parent] = pending[parent] + g if parent in pending else g
    for node, g in pending.items():
        if node.is_leaf:
            total = np.array(g, dtype=node.data.dtype)
            node.grad = total if node.grad is None else node.grad + total
'''),
    Alternative("backward_code", "index-based reverse loop, .grad on internal nodes, in-place only into arrays "
                "this call made (tracked by id)",
                source='''def backward(root: Variable) -> None:
    """Accumulate d(sum of root's entries)/d(leaf) into leaf.grad for every leaf of root's graph."""
    order = topo_sort(root)
    mine = {}  # id -> array, kept alive so that an id is never reused
    seed = np.ones_like(root.data)
    root.grad = seed if root.grad is None or not root.is_leaf else np.asarray(root.grad + seed)
    mine[id(root.grad)] = root.grad
    for i in range(len(order) - 1, -1, -1):
        node = order[i]
        if node.op is None or node.grad is None:
            continue
        grads = node.op.backward(node.grad)
        node.grad = None
        for k, parent in enumerate(node.parents):
            g = grads[k]
            if g is None:
                continue
            if parent.grad is None:
                parent.grad = np.array(g, dtype=parent.data.dtype)  # a new ndarray, also for a 0-d g
            elif id(parent.grad) in mine:
                np.add(parent.grad, g, out=parent.grad)
                continue
            else:
                parent.grad = np.asarray(parent.grad + g)  # 0-d + 0-d gives a NumPy scalar
            mine[id(parent.grad)] = parent.grad
'''),
    Alternative("zero_grad_code", "an explicit stack walk, without topo_sort",
                source='''def zero_grad(root: Variable) -> None:
    """Set .grad to None on every node of root's graph."""
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        node.grad = None
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
'''),
    Alternative("zero_grad_code", "topo_sort's order from the root down, with setattr",
                source='''def zero_grad(root: Variable) -> None:
    """Set .grad to None on every node of root's graph."""
    for node in reversed(topo_sort(root)):
        setattr(node, "grad", None)
'''),
]
