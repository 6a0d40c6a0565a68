"""Folding large graphs: which Variables a drawing shows one by one, and which it folds into a summary box.

A graph of thousands of nodes cannot be read, and ``dot`` needs minutes to lay it out. Beyond ``max_nodes``
Variables, :func:`fold_graph` folds nodes in up to two passes, each linear in the node count:

1. Grouping. With ``group_by`` (``"module"`` or a function), every node of one group becomes one box. Without it,
   *repeated chains* are folded: runs of internal nodes where each feeds only the next and the next has no other
   internal input (an unrolled loop, a deep stack of layers); the first and last node of each run stay visible, and a
   leaf used only inside one folded run (a per-step constant or weight) goes into the same box.
2. Truncation. If more than ``max_nodes`` boxes and nodes remain, the ``max_nodes - 1`` nearest the root (in
   backward order) stay, and everything further away is folded into one last box.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from autograd_lab.variable import Parameter, Variable

GroupBy = str | Callable[[Variable], "str | None"] | None

#: Repeated chains shorter than this are left alone.
MIN_CHAIN = 4


@dataclass(eq=False)
class Fold:
    """A box standing for several Variables (and their operators)."""

    title: str
    members: list[Variable] = field(default_factory=list)
    key: str = ""

    def contents(self) -> str:
        """What is inside, most frequent first: ``"MulOp ×4,998, leaf ×4,999"`` (at most four kinds)."""
        kinds = Counter(
            type(v.op).__name__ if v.op is not None else ("Parameter" if isinstance(v, Parameter) else "leaf")
            for v in self.members
        )
        text = ", ".join(f"{kind} ×{n:,}" for kind, n in kinds.most_common(4))
        return text + (", …" if len(kinds) > 4 else "")


def module_of(v: Variable) -> str | None:
    """The module prefix of a dotted name: ``"fc1.weight"`` -> ``"fc1"``; None for names without a dot."""
    if v.name and "." in v.name:
        return v.name.rsplit(".", 1)[0]
    return None


def assign_groups(order: list[Variable], group_by: GroupBy) -> dict[Variable, str]:
    """Map each Variable to its group name (Variables without a group are left out).

    ``group_by="module"``: a named node takes its name's module prefix (:func:`module_of`); an unnamed internal node
    takes the group of its first Parameter input that has one, else of its first input that has one. So in an MLP
    whose parameters are called ``fc1.W``, ``fc1.b``, ... the MatMul, Add and ReLU nodes of a layer share its group.
    A callable is asked for every node; None means "no group".

    Raises:
        ValueError: for any other string.
    """
    if callable(group_by):
        return {v: g for v in order if (g := group_by(v)) is not None}
    if group_by != "module":
        raise ValueError(f"group_by must be None, 'module' or a function Variable -> str | None, got {group_by!r}")
    groups: dict[Variable, str] = {}
    for v in order:  # leaves first, so every input is settled before the nodes that use it
        own = module_of(v)
        if own is None and v.op is not None:
            inputs = v.parents
            own = next((groups[p] for p in inputs if isinstance(p, Parameter) and p in groups), None)
            own = own or next((groups[p] for p in inputs if p in groups), None)
        if own is not None:
            groups[v] = own
    return groups


def _chain_folds(order: list[Variable]) -> list[Fold]:
    uses: Counter[Variable] = Counter()
    user: dict[Variable, Variable] = {}
    for v in order:
        for p in v.parents:
            uses[p] += 1
            user[p] = v
    successor: dict[Variable, Variable] = {}
    for v in order:
        if v.op is not None and uses[v] == 1:
            nxt = user[v]
            internal_inputs = [p for p in nxt.parents if p.op is not None]
            if len(internal_inputs) == 1 and internal_inputs[0] is v:
                successor[v] = nxt
    has_predecessor = set(successor.values())
    folds: list[Fold] = []
    fold_of: dict[Variable, Fold] = {}
    for v in order:
        if v in successor and v not in has_predecessor:
            chain = [v]
            while chain[-1] in successor:
                chain.append(successor[chain[-1]])
            if len(chain) >= MIN_CHAIN:
                fold = Fold("repeated chain", chain[1:-1])
                folds.append(fold)
                fold_of.update(dict.fromkeys(fold.members, fold))
    # A leaf whose every use lies inside one fold joins it.
    leaf_users: dict[Variable, set[Fold | None]] = {}
    for v in order:
        for p in v.parents:
            if p.op is None:
                leaf_users.setdefault(p, set()).add(fold_of.get(v))
    for leaf, where in leaf_users.items():
        if len(where) == 1 and (only := next(iter(where))) is not None:
            only.members.append(leaf)
    return folds


def fold_graph(order: list[Variable], max_nodes: int, group_by: GroupBy) -> dict[Variable, Fold]:
    """Decide which Variables of ``order`` (``Engine.topo_sort(root)``) are folded, and into which box.

    Returns an empty dict when the graph has at most ``max_nodes`` Variables. The root (last in ``order``) is never
    folded. Boxes get keys ``f0, f1, ...`` in the topological order of their first member, so the result is the same
    on every run.
    """
    if len(order) <= max_nodes:
        return {}
    root = order[-1]
    if group_by is None:
        folds = _chain_folds(order)
    else:
        by_name: dict[str, Fold] = {}
        for v, g in assign_groups(order, group_by).items():
            if v is not root:
                by_name.setdefault(g, Fold(g)).members.append(v)
        folds = list(by_name.values())
    fold_of = {v: f for f in folds for v in f.members}

    # Truncation: keep the boxes and nodes nearest the root.
    units: dict[Variable | Fold, None] = {}
    for v in reversed(order):
        units.setdefault(fold_of.get(v, v), None)
    if len(units) > max_nodes:
        rest = Fold("further from the root")
        for unit in list(units)[max_nodes - 1 :]:
            rest.members.extend(unit.members if isinstance(unit, Fold) else [unit])
        fold_of.update(dict.fromkeys(rest.members, rest))

    position = {v: i for i, v in enumerate(order)}
    live = sorted({id(f): f for f in fold_of.values()}.values(), key=lambda f: min(position[v] for v in f.members))
    for i, fold in enumerate(live):
        fold.key = f"f{i}"
        fold.members = [v for v in fold.members if fold_of[v] is fold]
    return fold_of
