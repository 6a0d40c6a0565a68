"""MaxPool2DOp and AvgPool2DOp: definitions, the tie rule, gradcheck off the ties, PyTorch cross-checks, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import AvgPool2DOp, MaxPool2DOp

RNG = np.random.default_rng(12)


def direct(x, k, s, reduce):
    n, c, h, w = x.shape
    ho, wo = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    y = np.empty((n, c, ho, wo))
    for p in range(ho):
        for q in range(wo):
            y[:, :, p, q] = reduce(x[:, :, p * s[0]:p * s[0] + k[0], q * s[1]:q * s[1] + k[1]], axis=(2, 3))
    return y


CASES = [((2, 3, 4, 6), 2, None), ((1, 2, 5, 5), 3, 1), ((2, 1, 7, 4), (3, 2), (2, 2)), ((1, 1, 4, 4), 4, None)]


@pytest.mark.parametrize(("shape", "k", "s"), CASES)
@pytest.mark.parametrize(("op", "reduce"), [(MaxPool2DOp, np.max), (AvgPool2DOp, np.mean)])
def test_value_matches_the_definition_and_gradients_match_central_differences(shape, k, s, op, reduce):
    x = RNG.permutation(np.prod(shape)).reshape(shape) * 0.1  # distinct values, ≥ 0.1 apart: no ties, no kinks
    kk = (k, k) if isinstance(k, int) else k
    ss = kk if s is None else ((s, s) if isinstance(s, int) else s)
    y = op(k, s)(Variable.from_numpy(x))
    np.testing.assert_allclose(y.data, direct(x, kk, ss, reduce), rtol=1e-12)
    check_operator(lambda: op(k, s), x)


def test_max_pool_tie_gives_the_whole_gradient_to_the_first_maximum_in_row_major_order():
    x = np.array([[[[1.0, 3.0], [3.0, 3.0]]]])
    xv = Variable.from_numpy(x)
    Engine.backward(MaxPool2DOp(2)(xv), grad=np.array([[[[5.0]]]]))
    np.testing.assert_array_equal(xv.grad, [[[[0.0, 5.0], [0.0, 0.0]]]])


def test_overlapping_windows_add_their_gradients():
    x = np.array([[[[0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]]])  # the 9 is the max of both 2x2 windows
    xv = Variable.from_numpy(x)
    Engine.backward(MaxPool2DOp(2, stride=1)(xv), grad=np.array([[[[1.0, 2.0]]]]))
    np.testing.assert_array_equal(xv.grad, [[[[0.0, 3.0, 0.0], [0.0, 0.0, 0.0]]]])


def test_rows_and_columns_no_window_reaches_are_left_out_with_zero_gradient_as_in_pytorch():
    """A 2x2 window with stride 2 on 3x3 input: one output; row 2 and column 2 are never read."""
    xv = Variable.from_numpy(np.arange(9.0).reshape(1, 1, 3, 3))
    y = MaxPool2DOp(2)(xv)
    Engine.backward(y, grad=np.ones((1, 1, 1, 1)))
    np.testing.assert_array_equal(y.data, [[[[4.0]]]])
    np.testing.assert_array_equal(xv.grad, [[[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]])


def test_float32_stays_float32():
    x = Variable.from_numpy(RNG.standard_normal((2, 2, 4, 4)).astype(np.float32))
    assert MaxPool2DOp(2)(x).dtype == np.float32 and AvgPool2DOp(2)(x).dtype == np.float32


@pytest.mark.parametrize("op", [MaxPool2DOp, AvgPool2DOp])
@pytest.mark.parametrize(
    ("shape", "k", "s", "match"),
    [
        ((1, 1, 3, 3), 4, None, r"a 4x4 window with dilation \(1, 1\) does not fit the input 3x3"),
        ((1, 1, 4, 4), 2, 0, r"stride must be at least 1"),
        ((1, 4, 4), 2, None, r"x must be 4-D"),
    ],
)
def test_bad_input_raises_shape_error_naming_the_op_the_shape_and_the_line(op, shape, k, s, match):
    with pytest.raises(ShapeError, match=match) as info:
        op(k, s)(Variable.from_numpy(np.zeros(shape)))
    message = str(info.value)
    assert op.__name__ in message and str(shape) in message and "test_pooling.py:" in message


class TestAgainstPyTorch:
    torch = pytest.importorskip("torch")

    @pytest.mark.parametrize(("shape", "k", "s"), [((2, 3, 6, 8), 2, None), ((2, 2, 7, 5), (3, 1), (2, 2)),
                                                   ((1, 3, 6, 6), 3, 1)])
    @pytest.mark.parametrize("ties", [False, True])
    def test_max_pool_values_and_gradients_even_at_ties(self, shape, k, s, ties):
        torch = self.torch
        # With ties: small integers, so many windows share their maximum; PyTorch keeps the first one too.
        x = RNG.integers(0, 3, size=shape).astype(float) if ties else RNG.standard_normal(shape)
        self._compare(MaxPool2DOp(k, s), lambda t: torch.nn.functional.max_pool2d(t, k, s), x)

    @pytest.mark.parametrize(("shape", "k", "s"), [((2, 3, 6, 8), 2, None), ((2, 2, 7, 5), (3, 1), (2, 2))])
    def test_avg_pool_values_and_gradients(self, shape, k, s):
        torch = self.torch
        self._compare(AvgPool2DOp(k, s), lambda t: torch.nn.functional.avg_pool2d(t, k, s),
                      RNG.standard_normal(shape))

    def _compare(self, op, torch_fn, x):
        torch = self.torch
        xv = Variable.from_numpy(x)
        y = op(xv)
        gy = RNG.standard_normal(y.shape)
        Engine.backward(y, grad=gy)
        xt = torch.tensor(x, requires_grad=True)
        yt = torch_fn(xt)
        yt.backward(torch.tensor(gy))
        np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-12)
