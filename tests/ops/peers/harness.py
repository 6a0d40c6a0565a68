"""The differential harness: one case, run through our ops and through PyTorch, forward and every input's gradient.

A :class:`Case` names the peer suite and the test it was ported from, the inputs (shapes drawn uniformly, or values
written out), our computation and PyTorch's. :func:`run` feeds both the same inputs in the dtype under test, seeds
both backward passes with the same random upstream gradient, and compares the outputs and the gradients of the
inputs listed in ``grads``. Tolerances: the peer's own in float32, 1e-6 (relative) in float64. A case with
``numeric=True`` (the peer checked gradients numerically, as DeZero's ``gradient_check``) or no PyTorch counterpart
is also checked against central differences in float64.

NaN and inf must match exactly in place (``assert_allclose`` treats NaN as equal to NaN and inf as equal to inf).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from autograd_lab import Engine, Variable

#: float32 tolerances (rtol, atol) for values and gradients, per peer: the ones each suite asserts with.
PEER_TOLERANCE = {
    "tinygrad": ((1e-3, 1e-6), (1e-3, 1e-4)),    # helper_test_op: atol 1e-6, rtol 1e-3; grad_atol 1e-4, grad_rtol 1e-3
    "dezero": ((1e-5, 1e-4), (1e-5, 1e-4)),      # utils.array_allclose: rtol 1e-5, atol 1e-4
    "needle": ((1e-5, 1e-5), (1e-5, 1e-5)),      # test_sequence_models: atol = rtol = 1e-5
    "micrograd": ((1e-6, 1e-6), (1e-6, 1e-6)),   # test_engine: tol 1e-6 (absolute, float64; relative too here)
}
FLOAT64_TOLERANCE = (1e-6, 1e-9)


@dataclass
class Case:
    """One ported test case.

    Attributes:
        peer: "tinygrad", "dezero", "needle" or "micrograd". test: the peer's test function it comes from (with the
            variant, e.g. ``test_max_pool2d_padding[k=3, p=1]``).
        ours: our computation on Variables, returning one Variable.
        theirs: PyTorch's on tensors, returning one tensor; None when PyTorch has no equivalent.
        inputs: a shape (drawn uniformly from [low, high)) or an array of values, per input.
        grads: which inputs' gradients to compare (default: all).
        numeric: also check against central differences in float64.
        xfail: the reason, for an option the library still lacks (the test is then a strict expected failure).
        float32: whether the case runs in float32 too (off for values that only float64 holds).
        tolerance: the float32 ((rtol, atol) of values, (rtol, atol) of gradients), when the peer's test uses
            other tolerances than its suite's default.
    """

    peer: str
    test: str
    ours: Callable[..., Variable]
    theirs: Callable[..., Any] | None
    inputs: Sequence[tuple[int, ...] | np.ndarray | list[Any]]
    grads: Sequence[int] | None = None
    low: float = -2.0
    high: float = 2.0
    numeric: bool = False
    xfail: str | None = None
    float32: bool = True
    tolerance: tuple[tuple[float, float], tuple[float, float]] | None = None
    id: str = field(init=False)

    def __post_init__(self) -> None:
        self.id = f"{self.peer}:{self.test}"

    def arrays(self, dtype: type) -> list[np.ndarray]:
        """The inputs in ``dtype``, the random ones drawn from a generator seeded by the case's name."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        out = []
        for spec in self.inputs:
            if isinstance(spec, tuple):
                out.append(rng.uniform(self.low, self.high, size=spec).astype(dtype))
            else:
                out.append(np.asarray(spec, dtype=dtype))
        return out


def params(cases: Sequence[Case]) -> list[Any]:
    """pytest parameters for the cases, each in float32 and float64, strict expected failures marked."""
    out = []
    for case in cases:
        for dtype in (np.float32, np.float64):
            if dtype is np.float32 and not case.float32:
                continue
            marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
            # pytest-xdist cannot route a test whose id holds brackets of its own: the variant goes in parentheses
            name = case.id.replace("[", "(").replace("]", ")")
            out.append(pytest.param(case, dtype, id=f"{name}-{np.dtype(dtype).name}", marks=marks))
    return out


def run(case: Case, dtype: type, torch: Any) -> None:
    """Compare our forward value and gradients with PyTorch's (and central differences when asked)."""
    arrays = case.arrays(dtype)
    wanted = range(len(arrays)) if case.grads is None else case.grads
    float32 = case.tolerance or PEER_TOLERANCE[case.peer]
    rtol_y, atol_y = FLOAT64_TOLERANCE if dtype is np.float64 else float32[0]
    rtol_g, atol_g = FLOAT64_TOLERANCE if dtype is np.float64 else float32[1]
    ours = [Variable.from_numpy(a) for a in arrays]
    y = case.ours(*ours)
    assert y.dtype == dtype, f"{case.id}: our output is {y.dtype}, expected {np.dtype(dtype)}"
    gy = np.random.default_rng(7).uniform(0.5, 1.5, size=y.shape).astype(dtype)
    if case.theirs is not None:
        theirs = [torch.tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
        t = case.theirs(*theirs)
        np.testing.assert_allclose(y.data, t.detach().numpy(), rtol=rtol_y, atol=atol_y,
                                   err_msg=f"{case.id}: forward value")
    Engine.backward(y, grad=gy)
    if case.theirs is not None:
        t.backward(torch.tensor(gy))
        for i in wanted:
            # An input the graph does not reach keeps grad None in both libraries (our LSTM leaves out W_hh·h_0
            # for a zero initial state, where PyTorch computes the product): the gradient is 0.
            expected = theirs[i].grad.numpy() if theirs[i].grad is not None else np.zeros_like(arrays[i])
            got = ours[i].grad if ours[i].grad is not None else np.zeros_like(arrays[i])
            np.testing.assert_allclose(got, expected, rtol=rtol_g, atol=atol_g,
                                       err_msg=f"{case.id}: gradient of input {i}")
    if (case.numeric or case.theirs is None) and dtype is np.float64:
        for i in wanted:
            picked, numeric = central_differences(case.ours, arrays, i, gy)
            np.testing.assert_allclose(ours[i].grad.reshape(-1)[picked], numeric, rtol=1e-5, atol=1e-7,
                                       err_msg=f"{case.id}: gradient of input {i} (central differences)")


def central_differences(f: Callable[..., Variable], arrays: list[np.ndarray], i: int, gy: np.ndarray,
                        h: float = 1e-6, most: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """d(Σ gy·f)/d(input i) by central differences at up to ``most`` elements of input i (a seeded sample):
    returns their flat positions and the estimates."""
    base = arrays[i]
    picked = np.random.default_rng(1).permutation(base.size)[:most]
    out = np.empty(len(picked))
    for k, flat in enumerate(picked):
        index = np.unravel_index(flat, base.shape)
        values = []
        for step in (h, -h):
            moved = base.copy()
            moved[index] += step
            args = [Variable.from_numpy(moved if k == i else a) for k, a in enumerate(arrays)]
            values.append(float(np.sum(f(*args).data * gy)))
        out[k] = (values[0] - values[1]) / (2 * h)
    return picked, out
