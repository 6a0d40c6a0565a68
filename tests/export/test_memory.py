"""Arena planning: dead buffers are reused, live ones never overlap."""

from __future__ import annotations

import numpy as np

from autograd_lab.export import trace
from autograd_lab.export.lower import lower
from autograd_lab.export.memory import plan_arena
from autograd_lab.nn import MLP


def _lifetimes(steps, graph):
    first, last = {}, {}
    for i, s in enumerate(steps):
        for t in s.inputs:
            if id(t) in first:
                last[id(t)] = i
        if s.output is not graph.output:
            first[id(s.output)] = last[id(s.output)] = i
    return first, last


def test_a_deep_mlp_reuses_memory():
    graph = trace(MLP([64, 100, 100, 100, 100, 10], layer_norm=True, rng=0), (1, 64))
    steps = lower(graph)
    plan = plan_arena(steps, "f32", {id(graph.output)})
    # Eight hidden tensors of 100 floats (dense, layer norm in place, dense, ...): two buffers suffice.
    assert plan.elements == 2 * 100


def test_planned_buffers_with_overlapping_lifetimes_do_not_overlap():
    graph = trace(MLP([30, 17, 23, 9, 5], activation="tanh", layer_norm=True, rng=1), (1, 30))
    steps = lower(graph)
    plan = plan_arena(steps, "f32", {id(graph.output)})
    first, last = _lifetimes(steps, graph)
    sizes = {id(s.output): s.output.size for s in steps}
    ids = list(first)
    for i, a in enumerate(ids):
        for c in ids[i + 1:]:
            same_buffer = plan.offsets[a] == plan.offsets[c]
            if same_buffer and sizes[a] == sizes[c]:
                continue  # an in-place step: the output takes over its input's buffer
            if first[a] <= last[c] and first[c] <= last[a]:
                lo_a, lo_c = plan.offsets[a], plan.offsets[c]
                assert lo_a + sizes[a] <= lo_c or lo_c + sizes[c] <= lo_a
    assert plan.elements < sum(_round(s) for s in sizes.values())
    assert np.all([o % 4 == 0 for o in plan.offsets.values()])


def _round(n):
    return -(-n // 4) * 4
