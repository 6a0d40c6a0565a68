"""Chapter 01 (variables and graphs): plausible wrong answers, as edits of the current solutions."""

from ..spec import Mutant

PUSH = "                seen.add(parent)\n                stack.append(parent)\n"
HEAD_COUNT = "def count_nodes(root: Variable) -> int:\n"
HEAD_LEAVES = "def find_leaves(root: Variable) -> list[Variable]:\n"
HEAD_USES = "def use_counts(root: Variable) -> dict[Variable, int]:\n"

MUTANTS = [
    # count_nodes
    Mutant("count_nodes_code", "counts every use (edges), not every node",
           edits=[("    return len(seen)", "    return 1 + sum(len(v.parents) for v in seen)")], says=r"once"),
    Mutant("count_nodes_code", "forgets the root", edits=[("    seen = {root}", "    seen = set()")], says=r"root"),
    Mutant("count_nodes_code", "recursion",
           source=HEAD_COUNT + "    seen = set()\n\n"
                  "    def visit(node):\n"
                  "        if node not in seen:\n"
                  "            seen.add(node)\n"
                  "            for parent in node.parents:\n"
                  "                visit(parent)\n\n"
                  "    visit(root)\n"
                  "    return len(seen)\n", says=r"recursion"),
    Mutant("count_nodes_code", "marks nodes seen when popped and counts every pop",
           source=HEAD_COUNT + "    seen = set()\n    stack = [root]\n    n = 0\n"
                  "    while stack:\n"
                  "        node = stack.pop()\n"
                  "        seen.add(node)\n"
                  "        n += 1\n"
                  "        for parent in node.parents:\n"
                  "            if parent not in seen:\n"
                  "                stack.append(parent)\n"
                  "    return n\n", says=r"once"),
    Mutant("count_nodes_code", "returns the set of nodes", edits=[("    return len(seen)", "    return seen")],
           says=r"\bint\b"),
    Mutant("count_nodes_code", "only the root's parents (forgot to keep walking)",
           edits=[("                stack.append(parent)\n", "")], says=r"keep walking"),
    # find_leaves
    Mutant("find_leaves_code", "a leaf reached twice is listed twice",
           edits=[("        if node.is_leaf:\n            leaves.append(node)\n", ""),
                  ("        for parent in node.parents:\n",
                   "        for parent in node.parents:\n            if parent.is_leaf:\n                leaves.append(parent)\n")],
           says=r"once"),
    Mutant("find_leaves_code", "a leaf root gives []",
           edits=[("        if node.is_leaf:\n            leaves.append(node)\n", ""),
                  (PUSH, PUSH + "                if parent.is_leaf:\n                    leaves.append(parent)\n")],
           says=r"itself"),
    Mutant("find_leaves_code", "recursion",
           source=HEAD_LEAVES + "    seen = set()\n    leaves = []\n\n"
                  "    def visit(node):\n"
                  "        if node in seen:\n"
                  "            return\n"
                  "        seen.add(node)\n"
                  "        if node.is_leaf:\n"
                  "            leaves.append(node)\n"
                  "        for parent in node.parents:\n"
                  "            visit(parent)\n\n"
                  "    visit(root)\n"
                  "    return leaves\n", says=r"recursion"),
    Mutant("find_leaves_code", "returns a set", edits=[("    return leaves", "    return set(leaves)")],
           says=r"a list"),
    Mutant("find_leaves_code", "Parameters left out", edits=[("if node.is_leaf:", "if node.is_leaf and not "
                                                                                  "isinstance(node, Parameter):")],
           says=r"Parameters are leaves"),
    Mutant("find_leaves_code", "only the root's parents (forgot to keep walking)",
           edits=[("                stack.append(parent)\n", "")], says=r"keep walking"),
    # use_counts
    Mutant("use_counts_code", "an input used twice by one operator counted once",
           edits=[("        for parent in node.parents:\n", "        for parent in set(node.parents):\n")],
           says=r"twice"),
    Mutant("use_counts_code", "the root left out", edits=[("    counts = {root: 0}", "    counts = {}")], says=r"root"),
    Mutant("use_counts_code", "= for += (every count stays 1)",
           edits=[("counts[parent] += 1", "counts[parent] = 1")], says=r"every use"),
    Mutant("use_counts_code", "recursion",
           source=HEAD_USES + "    counts = {root: 0}\n\n"
                  "    def visit(node):\n"
                  "        for parent in node.parents:\n"
                  "            if parent in counts:\n"
                  "                counts[parent] += 1\n"
                  "            else:\n"
                  "                counts[parent] = 1\n"
                  "                visit(parent)\n\n"
                  "    visit(root)\n"
                  "    return counts\n", says=r"recursion"),
    Mutant("use_counts_code", "counts each node's inputs instead of its uses",
           source=HEAD_USES + "    counts = {}\n    stack = [root]\n"
                  "    while stack:\n"
                  "        node = stack.pop()\n"
                  "        counts[node] = len(node.parents)\n"
                  "        for parent in node.parents:\n"
                  "            if parent not in counts:\n"
                  "                stack.append(parent)\n"
                  "    return counts\n", says=r"inputs"),
    Mutant("use_counts_code", "the root starts at 1", edits=[("    counts = {root: 0}", "    counts = {root: 1}")],
           says=r"root"),
    # MiniNode
    Mutant("mini_node_code", "the value is not copied",
           edits=[("data = np.array(value, dtype=np.float64)  # always a copy",
                   "data = np.asarray(value, dtype=np.float64)")], says=r"copy"),
    Mutant("mini_node_code", "the value is writable", edits=[("        data.setflags(write=False)\n", "")],
           says=r"read-only"),
    Mutant("mini_node_code", "the value property hands out a writable copy",
           edits=[("        return self._value\n", "        return self._value.copy()\n")], says=r"read-only"),
    Mutant("mini_node_code", "parents kept as given (a list stays a list)",
           edits=[("self._parents = tuple(parents)", "self._parents = parents")], says=r"tuple"),
    Mutant("mini_node_code", "the value keeps its dtype",
           edits=[("data = np.array(value, dtype=np.float64)  # always a copy", "data = np.array(value)")],
           says=r"float64"),
    Mutant("mini_node_code", "is_leaf from the parents instead of op_name",
           edits=[("        return self._op_name is None\n", "        return not self._parents\n")],
           says=r"op_name is None"),
    Mutant("mini_node_code", "mini_mul lists its parents in reverse",
           edits=[('return MiniNode(a.value * b.value, "mul", (a, b))', 'return MiniNode(a.value * b.value, "mul", (b, a))')],
           says=r"input order"),
]
