"""Conv2DOp: definition (a direct loop oracle), float64 gradcheck, PyTorch cross-checks, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import Conv2DOp

RNG = np.random.default_rng(11)


def direct(x, w, stride=1, padding=0):
    """Cross-correlation written out from its definition, one output pixel at a time (slow, obviously right)."""
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    ho = (h + 2 * padding - kh) // stride + 1
    wo = (wd + 2 * padding - kw) // stride + 1
    y = np.zeros((n, o, ho, wo))
    for p in range(ho):
        for q in range(wo):
            patch = xp[:, :, p * stride:p * stride + kh, q * stride:q * stride + kw]
            y[:, :, p, q] = np.einsum("ncij,ocij->no", patch, w)
    return y


CASES = [  # x shape, w shape, stride, padding
    ((2, 1, 5, 5), (3, 1, 3, 3), 1, 0),
    ((2, 3, 6, 5), (4, 3, 3, 2), 2, 1),
    ((1, 2, 7, 4), (2, 2, 1, 3), (2, 1), (0, 1)),
    ((3, 2, 4, 4), (1, 2, 4, 4), 1, 0),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "padding"), CASES)
def test_value_matches_the_definition_and_gradients_match_central_differences(xs, ws, stride, padding):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    y = Conv2DOp(stride, padding)(Variable.from_numpy(x), Variable.from_numpy(w))
    if isinstance(stride, int) and isinstance(padding, int):
        np.testing.assert_allclose(y.data, direct(x, w, stride, padding), rtol=1e-12, atol=1e-12)
    check_operator(lambda: Conv2DOp(stride, padding), x, w)


def test_float32_stays_float32():
    x = RNG.standard_normal((2, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    y = Conv2DOp(padding=1)(Variable.from_numpy(x), Variable.from_numpy(w))
    assert y.dtype == np.float32 and y.shape == (2, 3, 5, 5)


def test_input_gradient_skipped_when_not_wanted():
    x = Variable.from_numpy(RNG.standard_normal((1, 1, 4, 4)))
    w = Variable.from_numpy(RNG.standard_normal((1, 1, 3, 3)))
    from autograd_lab.ops import SumOp

    Engine.backward(SumOp()(Conv2DOp()(x, w)), inputs=[w])
    assert x.grad is None and w.grad.shape == (1, 1, 3, 3)


@pytest.mark.parametrize(
    ("xs", "ws", "kwargs", "match"),
    [
        ((2, 3, 5, 5), (4, 2, 3, 3), {}, r"x has 3 channels but the filters expect 2"),
        ((2, 1, 3, 3), (1, 1, 5, 5), {"padding": 0}, r"kernel 5x5 is larger than the padded input 3x3"),
        ((2, 1, 5, 5), (1, 1, 3, 3), {"stride": 0}, r"stride must be at least 1"),
        ((1, 5, 5), (1, 1, 3, 3), {}, r"x must be 4-D"),
        ((1, 1, 5, 5), (1, 3, 3), {}, r"w must be 4-D"),
    ],
)
def test_bad_input_raises_shape_error_naming_the_op_the_shapes_and_the_line(xs, ws, kwargs, match):
    x, w = Variable.from_numpy(np.zeros(xs)), Variable.from_numpy(np.zeros(ws))
    with pytest.raises(ShapeError, match=match) as info:
        Conv2DOp(**kwargs)(x, w)
    message = str(info.value)
    assert "Conv2DOp" in message and str(xs) in message and str(ws) in message and "test_conv.py:" in message


def test_bad_stride_type_raises_type_error():
    with pytest.raises(TypeError, match="stride"):
        Conv2DOp(stride=1.5)


class TestAgainstPyTorch:
    torch = pytest.importorskip("torch")

    @pytest.mark.parametrize(
        ("xs", "ws", "stride", "padding"),
        [((2, 3, 7, 6), (4, 3, 3, 3), 2, 1), ((3, 2, 9, 5), (5, 2, 2, 3), 1, 1), ((1, 4, 8, 8), (2, 4, 5, 3), 3, 2),
         ((2, 3, 6, 7), (2, 3, 3, 2), (2, 1), (1, 0))],
    )
    def test_values_and_gradients(self, xs, ws, stride, padding):
        torch = self.torch
        x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
        xv, wv = Variable.from_numpy(x), Variable.from_numpy(w)
        y = Conv2DOp(stride, padding)(xv, wv)
        gy = RNG.standard_normal(y.shape)
        Engine.backward(y, grad=gy)
        xt = torch.tensor(x, requires_grad=True)
        wt = torch.tensor(w, requires_grad=True)
        yt = torch.nn.functional.conv2d(xt, wt, stride=stride, padding=padding)
        yt.backward(torch.tensor(gy))
        np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(wv.grad, wt.grad.numpy(), rtol=1e-10, atol=1e-12)
