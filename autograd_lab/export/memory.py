"""Arena planning: give every intermediate tensor an offset in one static buffer, reusing memory that is dead.

A tensor lives from the step that writes it to the last step that reads it. Two tensors may share memory exactly when
their lifetimes do not overlap (a step's inputs and output overlap at that step, so an output never lands on an input
unless the step works in place; a kernel's scratch buffers live during their step only). Offsets are found greedily:
the largest buffers first, each at the lowest offset that does not collide with an already placed buffer whose
lifetime overlaps (the classic "greedy by size" heuristic for static memory planning; see e.g. Pisarchyk & Lee,
"Efficient Memory Management for Deep Neural Net Inference", arXiv:2001.03288, 2020).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Tensor

ALIGN = 4  # elements: 16-byte alignment for float and pair-word buffers


@dataclass
class ArenaPlan:
    """Where each arena tensor lives: ``offsets[id(tensor)]`` in elements of the pool, and the pool's total size."""

    offsets: dict[int, int]
    elements: int


def plan_arena(steps: list[Step], pool: str, exclude: set[int]) -> ArenaPlan:
    """Plan the buffers of the tensors of dtype ``pool`` ("f32" or "q16") written by ``steps``.

    Args:
        steps: the kernel steps in execution order.
        pool: which tensors to place, by ``Tensor.dtype``.
        exclude: ids of tensors that do not live in the arena (the model's output, written straight to the caller).

    Returns:
        The offsets (elements) and the arena length (elements), which is 0 when nothing needs the arena.
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    tensors: dict[int, Tensor] = {}
    alias: dict[int, int] = {}  # tensor id -> id of the tensor whose buffer it reuses (in-place steps)
    for i, step in enumerate(steps):
        for t in step.inputs:
            if id(t) in first:
                last[id(t)] = i
        for t in step.scratch:  # a kernel's scratch buffer lives during its step only
            if t.dtype == pool:
                first[id(t)] = last[id(t)] = i
                tensors[id(t)] = t
        out = step.output
        if out.dtype != pool or id(out) in exclude:
            continue
        src = step.inputs[0] if step.inputs else None
        if (step.in_place_ok and src is not None and id(src) in first and last[id(src)] == i
                and src.size == out.size and src.dtype == pool and not _read_later(steps, src, i)):
            alias[id(out)] = _root(alias, id(src))
        first[id(out)] = last[id(out)] = i
        tensors[id(out)] = out
    # A buffer lives from the first write of any tensor sharing it to the last read of any of them.
    span: dict[int, list[int]] = {}
    for tid in first:
        root = _root(alias, tid)
        lo, hi = span.get(root, [first[tid], last[tid]])
        span[root] = [min(lo, first[tid]), max(hi, last[tid])]
    placed: list[tuple[int, int, int, int]] = []  # offset, size, start, end
    offsets: dict[int, int] = {}
    for root in sorted(span, key=lambda r: (-tensors[r].size, span[r][0])):
        size = _round_up(tensors[root].size)
        start, end = span[root]
        busy = sorted((o, o + s) for o, s, a, b in placed if a <= end and start <= b)
        offset = 0
        for lo, hi in busy:
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        placed.append((offset, size, start, end))
        offsets[root] = offset
    for tid in first:
        offsets[tid] = offsets[_root(alias, tid)]
    total = max((o + s for o, s, _, _ in placed), default=0)
    return ArenaPlan(offsets, total)


def _root(alias: dict[int, int], tid: int) -> int:
    while tid in alias:
        tid = alias[tid]
    return tid


def _read_later(steps: list[Step], t: Tensor, i: int) -> bool:
    return any(x is t for s in steps[i + 1:] for x in s.inputs) or sum(x is t for x in steps[i].inputs) > 1


def _round_up(n: int) -> int:
    return -(-n // ALIGN) * ALIGN
