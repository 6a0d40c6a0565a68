"""Chapter 11 (define and run): plausible wrong answers to capture_tape, replay_forward, replay_backward and
same_structure."""

from ..spec import Mutant

_BFS_CAPTURE = '''def capture_tape(fn, *arrays):
    placeholders = [Variable.from_numpy(a) for a in arrays]
    result = fn(*placeholders)
    slot = {x: i for i, x in enumerate(placeholders)}
    # walk back from the output breadth first, then reverse: not a topological order in general
    seen, queue, order = {result}, [result], []
    while queue:
        node = queue.pop(0)
        order.append(node)
        for p in node.parents:
            if p not in seen:
                seen.add(p)
                queue.append(p)
    leaves, steps = [], []
    for node in reversed(order):
        if node in slot:
            continue
        slot[node] = len(slot)
        if node.is_leaf:
            leaves.append((slot[node], node))
    for node in reversed(order):
        if not node.is_leaf:
            steps.append((node.op, tuple(slot[p] for p in node.parents), slot[node]))
    return Tape(list(range(len(placeholders))), leaves, steps, slot[result], len(slot))
'''

MUTANTS = [
    # capture_tape
    Mutant("capture_tape_code", "placeholders also listed among the leaves",
           edits=[("        if node in slot:\n            continue\n",
                   "        if node in slot:\n            leaves.append((slot[node], node))\n            continue\n")],
           says=r"placeholders are not in leaves"),
    Mutant("capture_tape_code", "input slots in reverse order of node.parents",
           edits=[("tuple(slot[p] for p in node.parents)", "tuple(slot[p] for p in reversed(node.parents))")],
           says=r"order of node\.parents"),
    Mutant("capture_tape_code", "n_slots one short (the last slot's number)",
           edits=[("slot[result], len(slot))", "slot[result], len(slot) - 1)")], says=r"n_slots|slots"),
    Mutant("capture_tape_code", "only Parameters treated as leaves: constants recorded as steps",
           edits=[("if node.is_leaf:", "if isinstance(node, Parameter):")], says=r"constant"),
    Mutant("capture_tape_code", "nodes visited breadth first from the output, reversed: not a topological order",
           source=_BFS_CAPTURE, says=r"topological|before"),
    Mutant("capture_tape_code", "placeholders numbered in graph order, not as slots 0, 1, ...",
           edits=[("    for i, x in enumerate(placeholders):\n        slot[x] = i\n", ""),
                  ("        if node in slot:\n            continue\n        slot[node] = len(slot)\n",
                   "        slot[node] = len(slot)\n        if any(node is x for x in placeholders):\n"
                   "            continue\n"),
                  ("Tape(list(range(len(placeholders))),", "Tape([slot[x] for x in placeholders],")],
           says=r"slot 0|argument"),
    # replay_forward
    Mutant("replay_forward_code", "calls the operator (op(...)) on Variables instead of op.forward",
           edits=[("y = op.forward(*xs)", "y = op(*[Variable.from_numpy(a) for a in xs]).data")],
           says=r"made a Variable|already called"),
    Mutant("replay_forward_code", "does not save op.inputs for backward",
           edits=[("        op.inputs = xs\n", "")], says=r"op\.inputs"),
    Mutant("replay_forward_code", "does not save op.output for backward",
           edits=[("        op.output = y\n", "")], says=r"op\.output"),
    Mutant("replay_forward_code", "arguments put into the input slots in reverse order",
           edits=[("zip(tape.inputs, arrays)", "zip(reversed(tape.inputs), arrays)")], says=r"argument|order"),
    Mutant("replay_forward_code", "arguments cast to float32",
           edits=[("slots[i] = np.asarray(a)", "slots[i] = np.asarray(a, dtype=np.float32)")],
           says=r"dtype|float32|float64"),
    Mutant("replay_forward_code", "leaf values cached on the tape at the first replay",
           edits=[("    for i, leaf in tape.leaves:\n        slots[i] = leaf.data\n",
                   "    if not hasattr(tape, 'leaf_values'):\n"
                   "        tape.leaf_values = [(i, leaf.data) for i, leaf in tape.leaves]\n"
                   "    for i, value in tape.leaf_values:\n        slots[i] = value\n")],
           says=r"current values"),
    # replay_backward
    Mutant("replay_backward_code", "a slot's gradient overwritten instead of summed",
           edits=[("grads[i] = g if grads[i] is None else grads[i] + g", "grads[i] = g")],
           says=r"summed|overwr|add"),
    Mutant("replay_backward_code", "gradients summed in place with += into an array received from backward",
           edits=[("                grads[i] = g if grads[i] is None else grads[i] + g\n",
                   "                if grads[i] is None:\n                    grads[i] = g\n"
                   "                else:\n                    grads[i] += g\n")],
           says=r"in place|\+="),
    Mutant("replay_backward_code", "steps walked in forward order",
           edits=[("reversed(tape.steps)", "tape.steps")], says=r"reverse"),
    Mutant("replay_backward_code", ".grad overwritten instead of accumulated",
           edits=[("leaf.grad = np.array(grads[i]) if leaf.grad is None else leaf.grad + grads[i]",
                   "leaf.grad = np.array(grads[i])")], says=r"adds to \.grad|accumulat"),
    Mutant("replay_backward_code", ".grad stores the slot's array itself, not a copy",
           edits=[("leaf.grad = np.array(grads[i]) if", "leaf.grad = grads[i] if")], says=r"copy|same array"),
    Mutant("replay_backward_code", "gradients given to every leaf, constants too",
           edits=[("if isinstance(leaf, Parameter) and grads[i] is not None:", "if grads[i] is not None:")],
           says=r"Parameter|constant"),
    # same_structure
    Mutant("same_structure_code", "leaves compared by value, not identity",
           edits=[("leaf_a is not leaf_b", "not np.array_equal(leaf_a.data, leaf_b.data)")],
           says=r"very same|identity|another Parameter"),
    Mutant("same_structure_code", "operator configuration not compared",
           edits=[(" or op_a.config() != op_b.config()", "")], says=r"config"),
    Mutant("same_structure_code", "input slots not compared",
           edits=[("tuple(ins_a) != tuple(ins_b) or ", "")], says=r"slot|wir|order"),
    Mutant("same_structure_code", "leaves compared by slot only",
           edits=[("slot_a != slot_b or leaf_a is not leaf_b", "slot_a != slot_b")],
           says=r"very same|identity|another Parameter|other leaf"),
    Mutant("same_structure_code", "operators compared by identity (new on every capture)",
           edits=[("type(op_a) is not type(op_b) or op_a.config() != op_b.config()", "op_a is not op_b")],
           says=r"new on every capture|identity|class"),
    Mutant("same_structure_code", "operators compared by configuration only, not class",
           edits=[("type(op_a) is not type(op_b) or ", "")], says=r"different operators|class"),
]
