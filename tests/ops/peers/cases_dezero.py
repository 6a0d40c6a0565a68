"""Cases ported from DeZero (``oreilly-japan/deep-learning-from-scratch-3``, ``tests/``): ``test_getitem``,
``test_max``, ``test_pooling``, ``test_conv2d``, ``test_softmax_cross_entropy``, ``test_basic_math``.

DeZero checks forward values against Chainer and gradients numerically (``utils.gradient_check``); here the values
and gradients are compared with PyTorch, and, as DeZero does, the gradients with central differences in float64
(``numeric=True``). DeZero draws from ``np.random.randn``/``rand``; a uniform [-2, 2) draw stands in (the
distribution does not matter to these checks, away from ties).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from autograd_lab import ops as O

from .harness import Case

F = torch.nn.functional
CASES: list[Case] = []


def case(test: str, ours: Any, theirs: Any, inputs: list[Any], **kwargs: Any) -> None:
    CASES.append(Case("dezero", test, ours, theirs, inputs, numeric=True, **kwargs))


ARANGE = np.arange(12.0).reshape(2, 2, 3)
for test, key in [("test_forward1", 0), ("test_forward2", (0, 0, slice(0, 2, 1))), ("test_forward3", (Ellipsis, 2))]:
    case(f"test_getitem.{test}", lambda x, key=key: O.IndexOp(key)(x), lambda x, key=key: x[key], [ARANGE])
case("test_getitem.test_backward1", lambda x: O.IndexOp(1)(x), lambda x: x[1], [[[1.0, 2, 3], [4, 5, 6]]])
case("test_getitem.test_backward2", lambda x: O.IndexOp(slice(1, 3))(x), lambda x: x[1:3],
     [np.arange(12.0).reshape(4, 3)])

for test, shape, axis, keep in [("test_forward1", (10,), None, False), ("test_forward2", (10, 20, 30), 1, False),
                                ("test_forward3", (10, 20, 30), (0, 1), False),
                                ("test_forward4", (10, 20, 30), (0, 1), True), ("test_backward2", (10, 10), 1, False),
                                ("test_backward3", (10, 20, 30), (1, 2), False)]:
    case(f"test_max.{test}", lambda x, axis=axis, keep=keep: O.MaxOp(axis, keep)(x),
         lambda x, axis=axis, keep=keep: x.amax(dim=tuple(range(x.ndim)) if axis is None else axis, keepdim=keep),
         [shape], high=100.0)

for test, hw in [("test_forward1", 16), ("test_forward2", 15), ("test_backward1", 16)]:
    case(f"test_pooling.TestPooling.{test}", lambda x: O.MaxPool2DOp(2, 2, 0)(x), lambda x: F.max_pool2d(x, 2, 2, 0),
         [(1, 5, hw, hw)])
    case(f"test_pooling.TestAveragePooling.{test}", lambda x: O.AvgPool2DOp(2, 2, 0)(x),
         lambda x: F.avg_pool2d(x, 2, 2, 0), [(1, 5, hw, hw)])

for test, (n, c, h, w), (o, k, s, p) in [
    ("test_forward1", (1, 5, 15, 15), (8, (3, 3), (1, 1), (1, 1))),
    ("test_forward2", (1, 5, 15, 15), (8, (3, 3), (3, 1), (2, 1))),
    ("test_forward3", (1, 5, 20, 15), (3, (5, 3), 1, 3)),
    ("test_backward1", (1, 5, 20, 15), (3, (5, 3), 1, 3)),
]:
    case(f"test_conv2d.TestConv2d.{test}", lambda x, W, s=s, p=p: O.Conv2DOp(s, p)(x, W),
         lambda x, W, s=s, p=p: F.conv2d(x, W, stride=s, padding=p), [(n, c, h, w), (o, c, *k)])

LOGITS = [[-1.0, 0, 1, 2], [2, 0, 1, -1]]
case("test_softmax_cross_entropy.test_forward1", lambda x, t: O.SoftmaxCrossEntropyOp()(x, t),
     lambda x, t: F.cross_entropy(x, t.long()), [LOGITS, [3.0, 0.0]], grads=[0])
for test, n in [("test_backward2", 10), ("test_backward3", 100)]:
    labels = np.random.default_rng(n).integers(0, 10, n).astype(float)
    case(f"test_softmax_cross_entropy.{test}", lambda x, t: O.SoftmaxCrossEntropyOp()(x, t),
         lambda x, t: F.cross_entropy(x, t.long()), [(n, 10), labels], grads=[0])

for test, op, theirs in [("TestAdd", O.AddOp, torch.add), ("TestMul", O.MulOp, torch.mul),
                         ("TestSub", O.SubOp, torch.sub), ("TestDiv", O.DivOp, torch.div)]:
    for k, shapes in enumerate([[(3, 3), (3, 3)], [(3, 3), (3, 1)]]):
        case(f"test_basic_math.{test}.test_backward{k + 1}", lambda a, b, op=op: op()(a, b), theirs, shapes,
             low=0.5, high=2.0)
