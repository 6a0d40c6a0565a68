"""Cases ported from micrograd (``karpathy/micrograd``, ``test/test_engine.py``): ``test_sanity_check`` and
``test_more_ops``, the same scalar expressions written with our ops. micrograd compares with PyTorch in float64 to
1e-6; here float32 runs too, with the same tolerance relative to the values."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab import Variable
from autograd_lab import ops as O

from .harness import Case

CASES: list[Case] = []


def k(like: Variable, value: float) -> Variable:
    return Variable.from_numpy(np.asarray(value, dtype=like.dtype))


def sanity_check(x: Any) -> Any:
    """z = 2x + 2 + x; q = relu(z) + z·x; h = relu(z·z); y = h + q + q·x."""
    if isinstance(x, Variable):
        add, mul, relu = (lambda a, b: O.AddOp()(a, b)), (lambda a, b: O.MulOp()(a, b)), (lambda a: O.ReLUOp()(a))
        z = add(add(mul(k(x, 2.0), x), k(x, 2.0)), x)
        q = add(relu(z), mul(z, x))
        h = relu(mul(z, z))
        return add(add(h, q), mul(q, x))
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    return h + q + q * x


def more_ops(a: Any, b: Any) -> Any:
    """micrograd's test_more_ops: sums, products, powers, relu and divisions of two scalars."""
    if isinstance(a, Variable):
        add, mul, sub = (lambda x, y: O.AddOp()(x, y)), (lambda x, y: O.MulOp()(x, y)), (lambda x, y: O.SubOp()(x, y))
        div, relu, neg = (lambda x, y: O.DivOp()(x, y)), (lambda x: O.ReLUOp()(x)), (lambda x: O.NegOp()(x))
        c = add(a, b)
        d = add(mul(a, b), O.PowOp(3)(b))
        c = add(add(c, c), k(a, 1.0))
        c = add(add(add(c, k(a, 1.0)), c), neg(a))
        d = add(add(d, mul(d, k(a, 2.0))), relu(add(b, a)))
        d = add(add(d, mul(k(a, 3.0), d)), relu(sub(b, a)))
        e = sub(c, d)
        f = O.PowOp(2)(e)
        g = div(f, k(a, 2.0))
        return add(g, div(k(a, 10.0), f))
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    return g + 10.0 / f


CASES.append(Case("micrograd", "test_sanity_check", sanity_check, sanity_check, [-4.0]))
CASES.append(Case("micrograd", "test_more_ops", more_ops, more_ops, [-4.0, 2.0]))
