"""Chapter 11 (define and run): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("capture_tape_code", "its own iterative depth-first post-order (leaves interleaved), slots keyed by id",
                source='''def capture_tape(fn, *arrays):
    """Run fn once on placeholders holding arrays and return its Tape (see the Tape docstring)."""
    placeholders = [Variable.from_numpy(a) for a in arrays]
    result = fn(*placeholders)
    order, done, stack = [], set(), [(result, False)]
    while stack:  # post-order: a node is emitted after all its parents
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        for parent in reversed(node.parents):
            if id(parent) not in done:
                stack.append((parent, False))
    slots = {id(p): i for i, p in enumerate(placeholders)}
    leaves, steps = [], []
    for node in order:
        if id(node) in slots:
            continue
        slots[id(node)] = len(slots)
        if node.is_leaf:
            leaves.append((slots[id(node)], node))
        else:
            steps.append((node.op, tuple(slots[id(p)] for p in node.parents), slots[id(node)]))
    return Tape(list(range(len(placeholders))), leaves, steps, slots[id(result)], len(slots))
'''),
    Alternative("capture_tape_code", "the mirror of Engine.backward_order, reversed; two passes (number, then record)",
                source='''def capture_tape(fn, *arrays):
    """Run fn once on placeholders holding arrays and return its Tape (see the Tape docstring)."""
    placeholders = [Variable.from_numpy(a) for a in arrays]
    result = fn(*placeholders)
    order = list(reversed(Engine.backward_order(result)))
    slot = dict(zip(placeholders, range(len(placeholders))))
    for node in order:
        slot.setdefault(node, len(slot))
    others = [node for node in order if slot[node] >= len(placeholders)]
    leaves = [(slot[n], n) for n in others if n.is_leaf]
    steps = [(n.op, tuple(map(slot.__getitem__, n.parents)), slot[n]) for n in others if not n.is_leaf]
    return Tape(inputs=list(range(len(placeholders))), leaves=leaves, steps=steps, output=slot[result],
                n_slots=len(slot))
'''),
    Alternative("replay_forward_code", "a dict of slots instead of a list",
                source='''def replay_forward(tape, *arrays):
    """Run the tape's steps on new argument arrays; return the output array. Saves inputs/output on each op."""
    values = {slot: np.asarray(a) for slot, a in zip(tape.inputs, arrays)}
    values.update((slot, leaf.data) for slot, leaf in tape.leaves)
    for op, ins, out in tape.steps:
        op.inputs = tuple(values[i] for i in ins)
        op.output = values[out] = op.forward(*op.inputs)
    return values[tape.output]
'''),
    Alternative("replay_forward_code", "leaves read as copies (leaf.numpy()), inputs placed by index",
                source='''def replay_forward(tape, *arrays):
    """Run the tape's steps on new argument arrays; return the output array. Saves inputs/output on each op."""
    slots = [None for _ in range(tape.n_slots)]
    for k in range(len(tape.inputs)):
        slots[tape.inputs[k]] = np.asarray(arrays[k])
    for s, leaf in tape.leaves:
        slots[s] = leaf.numpy()
    for step in tape.steps:
        op, ins, out = step
        xs = tuple([slots[i] for i in ins])
        y = op.forward(*xs)
        op.inputs, op.output = xs, y
        slots[out] = y
    return slots[tape.output]
'''),
    Alternative("replay_backward_code", "a dict of gradients, np.add into new arrays, leaf gradients cast with astype",
                source='''def replay_backward(tape, y):
    """Add d(output)/d(p) into p.grad for every Parameter leaf of the tape, after replay_forward returned y."""
    grads = {tape.output: np.ones(np.shape(y), dtype=np.asarray(y).dtype)}
    for op, ins, out in tape.steps[::-1]:
        if out not in grads:
            continue
        for slot, g in zip(ins, op.backward(grads.pop(out))):
            if g is None:
                continue
            grads[slot] = np.add(grads[slot], g) if slot in grads else g
    for slot, leaf in tape.leaves:
        if isinstance(leaf, Parameter) and slot in grads:
            g = grads[slot].astype(leaf.dtype)
            leaf.grad = g if leaf.grad is None else np.add(leaf.grad, g)
'''),
    Alternative("replay_backward_code", "every contribution collected per slot, summed when the slot is reached",
                source='''def replay_backward(tape, y):
    """Add d(output)/d(p) into p.grad for every Parameter leaf of the tape, after replay_forward returned y."""
    parts = {tape.output: [np.ones_like(y)]}

    def total(slot):
        gs = parts.get(slot, [])
        return None if not gs else sum(gs[1:], np.copy(gs[0]))

    for op, ins, out in reversed(tape.steps):
        gy = total(out)
        if gy is None:
            continue
        for slot, g in zip(ins, op.backward(gy)):
            if g is not None:
                parts.setdefault(slot, []).append(g)
    for slot, leaf in tape.leaves:
        g = total(slot)
        if g is not None and isinstance(leaf, Parameter):
            leaf.grad = g if leaf.grad is None else leaf.grad + g
'''),
    Alternative("same_structure_code", "one signature tuple per tape (leaves by id), compared with ==",
                source='''def same_structure(tape_a, tape_b):
    """True when two tapes are the same program apart from the values (see the rule above)."""
    def signature(tape):
        return (tuple(tape.inputs), tape.output, tape.n_slots,
                tuple((slot, id(leaf)) for slot, leaf in tape.leaves),
                tuple((type(op), op.config(), tuple(ins), out) for op, ins, out in tape.steps))

    return signature(tape_a) == signature(tape_b)
'''),
    Alternative("same_structure_code", "all() over zipped pairs after the length checks",
                source='''def same_structure(tape_a, tape_b):
    """True when two tapes are the same program apart from the values (see the rule above)."""
    if list(tape_a.inputs) != list(tape_b.inputs) or tape_a.output != tape_b.output:
        return False
    if tape_a.n_slots != tape_b.n_slots:
        return False
    if len(tape_a.leaves) != len(tape_b.leaves) or len(tape_a.steps) != len(tape_b.steps):
        return False
    same_leaves = all(sa == sb and la is lb for (sa, la), (sb, lb) in zip(tape_a.leaves, tape_b.leaves))
    same_steps = all(type(a) == type(b) and a.config() == b.config() and list(ia) == list(ib) and oa == ob
                     for (a, ia, oa), (b, ib, ob) in zip(tape_a.steps, tape_b.steps))
    return bool(same_leaves and same_steps)
'''),
]
