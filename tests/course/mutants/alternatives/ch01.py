"""Chapter 01 (variables and graphs): correct answers of other designs than the solution's; each must pass every
test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("count_nodes_code", "breadth first with a deque, ids in the seen set",
                source='''def count_nodes(root: Variable) -> int:
    """Number of distinct Variables that root depends on, root included."""
    from collections import deque

    seen = {id(root)}
    queue = deque([root])
    while queue:
        for parent in queue.popleft().parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return len(seen)
'''),
    Alternative("count_nodes_code", "a stack that may hold duplicates, checked when popped",
                source='''def count_nodes(root: Variable) -> int:
    """Number of distinct Variables that root depends on, root included."""
    seen = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(node.parents)
    return len(seen)
'''),
    Alternative("find_leaves_code", "collect every node first (an ordered dict), then filter by op is None",
                source='''def find_leaves(root: Variable) -> list[Variable]:
    """The distinct leaves (op is None) that root depends on, each once."""
    nodes = {root: None}
    stack = [root]
    while stack:
        for parent in stack.pop().parents:
            if parent not in nodes:
                nodes[parent] = None
                stack.append(parent)
    return [node for node in nodes if node.op is None]
'''),
    Alternative("find_leaves_code", "breadth first, leaves gathered in a dict keyed by id",
                source='''def find_leaves(root: Variable) -> list[Variable]:
    """The distinct leaves (op is None) that root depends on, each once."""
    from collections import deque

    leaves = {}
    seen = set()
    queue = deque([root])
    while queue:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.is_leaf:
            leaves[id(node)] = node
        queue.extend(node.parents)
    return list(leaves.values())
'''),
    Alternative("use_counts_code", "two passes: find the nodes, then count every parents entry",
                source='''def use_counts(root: Variable) -> dict[Variable, int]:
    """Map each node of root's graph to how many times it is an input (an input used twice counts twice)."""
    nodes = [root]
    seen = {root}
    i = 0
    while i < len(nodes):
        for parent in nodes[i].parents:
            if parent not in seen:
                seen.add(parent)
                nodes.append(parent)
        i += 1
    counts = dict.fromkeys(nodes, 0)
    for node in nodes:
        for parent in node.parents:
            counts[parent] += 1
    return counts
'''),
    Alternative("use_counts_code", "a collections.Counter (a dict subclass) filled while walking",
                source='''def use_counts(root: Variable) -> dict[Variable, int]:
    """Map each node of root's graph to how many times it is an input (an input used twice counts twice)."""
    from collections import Counter

    counts = Counter({root: 0})
    stack = [root]
    while stack:
        node = stack.pop()
        for parent in node.parents:
            new = parent not in counts
            counts[parent] += 1
            if new:
                stack.append(parent)
    return counts
'''),
    Alternative("mini_node_code", "__slots__, a value filled into np.empty, properties via operator.attrgetter",
                source='''import operator


class MiniNode:
    """A minimal graph node: a read-only float64 value, the op that made it, and its parents."""

    __slots__ = ("_value", "_op_name", "_parents", "grad")

    def __init__(self, value, op_name: str | None = None, parents: tuple = ()) -> None:
        data = np.empty(np.shape(value), dtype=np.float64)
        data[...] = value
        data.flags.writeable = False
        self._value = data
        self._op_name = op_name
        self._parents = (*parents,)
        self.grad = None

    value = property(operator.attrgetter("_value"))
    op_name = property(operator.attrgetter("_op_name"))
    parents = property(operator.attrgetter("_parents"))
    is_leaf = property(lambda self: self._op_name is None)


def mini_add(a: MiniNode, b: MiniNode) -> MiniNode:
    return MiniNode(np.add(a.value, b.value), op_name="add", parents=[a, b])


def mini_mul(a: MiniNode, b: MiniNode) -> MiniNode:
    return MiniNode(np.multiply(a.value, b.value), op_name="mul", parents=[a, b])
'''),
    Alternative("mini_node_code", "a shared helper building nodes from a dict of op functions, copy via astype",
                source='''class MiniNode:
    """A minimal graph node: a read-only float64 value, the op that made it, and its parents."""

    def __init__(self, value, op_name: str | None = None, parents: tuple = ()) -> None:
        v = np.asarray(value).astype(np.float64, copy=True)
        v.setflags(write=False)
        self.__dict__.update(_v=v, _op=op_name, _ps=tuple(parents), grad=None)

    @property
    def value(self) -> np.ndarray:
        return self._v

    @property
    def op_name(self) -> str | None:
        return self._op

    @property
    def parents(self) -> tuple:
        return self._ps

    @property
    def is_leaf(self) -> bool:
        return self.op_name is None


_MINI_OPS = {"add": np.add, "mul": np.multiply}


def _mini_apply(name, a, b):
    return MiniNode(_MINI_OPS[name](a.value, b.value), name, (a, b))


def mini_add(a: MiniNode, b: MiniNode) -> MiniNode:
    return _mini_apply("add", a, b)


def mini_mul(a: MiniNode, b: MiniNode) -> MiniNode:
    return _mini_apply("mul", a, b)
'''),
]
