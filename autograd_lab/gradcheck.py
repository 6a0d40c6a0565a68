"""Gradient checking: compare the engine's backward with central differences computed in float64.

For a function ``fn`` of Variables with output y, a fixed random direction r (seeded; r = 1 for a one-element y)
turns y into the scalar L = Σ r ⊙ y, whose gradient the engine computes with one backward
(``Engine.backward(y, grad=r)``); a random r makes every element of the Jacobian count. Each input element x_i is then
nudged by ±eps, in float64 whatever the model's dtype (a float32 difference with a small eps is mostly rounding noise),
and

    dL/dx_i ≈ (L(x + eps·e_i) - L(x - eps·e_i)) / (2·eps)        (central difference, error O(eps²)).

An element passes when ``|analytic - numeric| ≤ atol + rtol·|numeric|`` (the rule of ``np.allclose``).

Kinks (ReLU and LeakyReLU at 0, ties in MaxOp): there the derivative does not exist, the central difference averages
the two one-sided slopes, and the engine's documented convention (ReLU'(0) = 0, LeakyReLU'(0) = slope, MaxOp splits
ties equally) legitimately differs from it. So when an element fails the test above, gradcheck takes the one-sided
slopes (L(x ± h·e_i) - L(x)) / ±h for h = eps and h = eps/4. At a smooth point their gap is O(h) and shrinks with h;
at a kink it is a jump in slope and stays. For a kink, the element passes if the analytic value lies between the
one-sided slopes (within the tolerance), as every subgradient does; otherwise the failure stands. Tests that want the
strict check everywhere simply choose inputs at least eps away from kinks.

Inputs that are not differentiable (class-index labels) are left out with ``wrt=``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograd_lab.engine import Engine
from autograd_lab.errors import AutogradError
from autograd_lab.modes import no_grad
from autograd_lab.operator import Operator
from autograd_lab.variable import Variable


class GradcheckError(AutogradError, AssertionError):
    """The analytic gradient disagrees with central differences. The message names the worst element."""


@dataclass(frozen=True)
class GradcheckReport:
    """The worst element found by :func:`gradcheck` (the one that used most of its tolerance).

    Attributes:
        input_index: which input of ``fn``.
        element_index: the element's index within that input (a tuple; ``()`` for a 0-d input).
        analytic: the engine's gradient there.
        numeric: the central difference there.
        rel_error: ``|analytic - numeric| / max(|analytic|, |numeric|)`` (0 when both are 0).
        at_kink: True when the one-sided differences disagreed, so the subgradient test was applied.
        checked: how many elements were compared.
    """

    input_index: int
    element_index: tuple[int, ...]
    analytic: float
    numeric: float
    rel_error: float
    at_kink: bool
    checked: int

    def describe(self) -> str:
        kink = " (at a kink: subgradient test)" if self.at_kink else ""
        return (
            f"input {self.input_index}, element {self.element_index}: analytic {self.analytic:.10g}, "
            f"numeric {self.numeric:.10g}, relative error {self.rel_error:.3g}{kink}"
        )


def gradcheck(
    fn: Callable[..., Variable],
    inputs: Sequence[Any],
    eps: float = 1e-6,
    atol: float | None = None,
    rtol: float | None = None,
    wrt: Sequence[int] | None = None,
    seed: int = 0,
) -> GradcheckReport:
    """Check ``fn``'s gradients against central differences; raise :class:`GradcheckError` on a mismatch.

    Args:
        fn: takes one Variable per input and returns a Variable of any shape (built with operators). It must be
            deterministic: give dropout a fixed ``mask=`` or run under ``eval_mode()``.
        inputs: a sequence of array-likes (or Variables, whose ``.data`` is used); a single array means one input.
            The analytic gradient is computed at each input's own dtype (so float32 code paths are tested); the
            numeric one on float64 copies.
        eps: the step of the differences, in input units.
        atol, rtol: tolerances; default 1e-6 and 1e-4, or 1e-4 and 1e-3 when any input is float32.
        wrt: indices of the inputs to check (default: all). Leave out non-differentiable inputs such as labels.
        seed: seed of the random direction r.

    Returns:
        A :class:`GradcheckReport` of the worst element (all elements passed).

    Raises:
        GradcheckError: naming the input, the element, the analytic and numeric values and the relative error of the
            worst element, when any element fails.
        TypeError: if ``fn`` does not return a Variable.
    """
    if isinstance(inputs, (np.ndarray, Variable)):
        inputs = [inputs]
    arrays = [np.asarray(x.data if isinstance(x, Variable) else x) for x in inputs]
    leaves = [Variable.from_numpy(a) for a in arrays]
    low_precision = any(v.dtype == np.float32 or v.dtype == np.float16 for v in leaves)
    atol = (1e-4 if low_precision else 1e-6) if atol is None else atol
    rtol = (1e-3 if low_precision else 1e-4) if rtol is None else rtol
    wrt = list(range(len(arrays))) if wrt is None else list(wrt)

    out = fn(*leaves)
    if not isinstance(out, Variable):
        raise TypeError(f"gradcheck: fn must return a Variable, got {type(out).__name__}")
    # A one-element output is checked as is, so the report shows the plain gradient.
    rng = np.random.default_rng(seed)
    direction = np.ones(out.shape) if out.size == 1 else rng.standard_normal(out.shape)
    # Also when fn returns one of its inputs unchanged: backward on a leaf root gives it the seed. Only the inputs
    # receive gradients, not Parameters or constants that fn closes over.
    Engine.backward(out, grad=direction.astype(out.dtype), inputs=leaves)

    points = [a.astype(np.float64) for a in arrays]

    def evaluate(values: list[np.ndarray]) -> float:
        with no_grad():
            y = fn(*[Variable.from_numpy(v) for v in values])
        return float(np.sum(direction * y.data.astype(np.float64)))

    def loss(k: int, i: int, delta: float) -> float:
        nudged = list(points)
        nudged[k] = points[k].copy()
        nudged[k].flat[i] += delta
        return evaluate(nudged)

    base = evaluate(points)
    worst: GradcheckReport | None = None
    worst_score = -1.0
    checked = 0
    for k in wrt:
        grad = leaves[k].grad
        analytic_k = np.zeros(points[k].shape) if grad is None else grad.astype(np.float64)
        for i in range(points[k].size):
            up, down = loss(k, i, eps), loss(k, i, -eps)
            numeric = (up - down) / (2 * eps)
            analytic = float(analytic_k.flat[i])
            tol = atol + rtol * abs(numeric)
            score = abs(analytic - numeric) / tol
            at_kink = False
            if score > 1.0:
                slopes = [(up - base) / eps, (base - down) / eps]
                slopes += [(loss(k, i, eps / 4) - base) / (eps / 4), (base - loss(k, i, -eps / 4)) / (eps / 4)]
                jump, jump_small = abs(slopes[0] - slopes[1]), abs(slopes[2] - slopes[3])
                # Smooth: the one-sided slopes differ by O(eps), so a quarter of the step shrinks the gap 4x.
                # Kink: the gap is a jump in slope and stays.
                at_kink = jump > tol and jump_small > 0.5 * jump
                if at_kink:
                    score = max(min(slopes) - analytic, analytic - max(slopes), 0.0) / tol
            checked += 1
            if score > worst_score:
                worst_score = score
                scale = max(abs(analytic), abs(numeric))
                worst = GradcheckReport(
                    input_index=k,
                    element_index=tuple(int(j) for j in np.unravel_index(i, points[k].shape)),
                    analytic=analytic,
                    numeric=numeric,
                    rel_error=abs(analytic - numeric) / scale if scale else 0.0,
                    at_kink=at_kink,
                    checked=0,
                )
    if worst is None:
        return GradcheckReport(-1, (), 0.0, 0.0, 0.0, False, 0)
    report = GradcheckReport(**{**worst.__dict__, "checked": checked})
    if worst_score > 1.0:
        raise GradcheckError(
            f"gradient check failed (eps={eps}, atol={atol}, rtol={rtol}); worst of {checked} elements: "
            f"{report.describe()}"
        )
    return report


def check_operator(
    op_factory: Callable[[], Operator],
    *arrays: Any,
    wrt: Sequence[int] | None = None,
    eps: float = 1e-6,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> GradcheckReport:
    """Gradient-check one operator: ``check_operator(lambda: MatMulOp(transpose_b=True), a, b)``.

    A fresh operator is made for every evaluation (an operator records one call). Also checks that the output keeps
    the inputs' dtype when they all share one (float32 stays float32).

    Args:
        op_factory: returns a new operator each time it is called.
        arrays: the operator's inputs, as arrays.
        wrt, eps, atol, rtol, seed: as for :func:`gradcheck`.

    Raises:
        GradcheckError: as :func:`gradcheck`, or when the output dtype is wrong.
    """
    leaves = [Variable.from_numpy(a) for a in arrays]
    op = op_factory()
    out = op(*leaves)
    dtypes = {v.dtype for v in leaves}
    if len(dtypes) == 1 and out.dtype not in dtypes:
        raise GradcheckError(f"{type(op).__name__}: output dtype {out.dtype}, expected {leaves[0].dtype} (the inputs')")
    return gradcheck(lambda *vs: op_factory()(*vs), arrays, eps=eps, atol=atol, rtol=rtol, wrt=wrt, seed=seed)
