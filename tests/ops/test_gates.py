"""LSTMGatesOp: σ σ tanh σ by blocks; values against NumPy, gradients against central differences and PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import LSTMCellStateOp, LSTMGatesOp, LSTMHiddenOp, MulOp, SumOp

RNG = np.random.default_rng(0)


def oracle(z: np.ndarray) -> np.ndarray:
    """The four blocks squashed one by one in float64: σ, σ, tanh, σ."""
    z = z.astype(np.float64)
    h = z.shape[-1] // 4
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    return np.concatenate([sig(z[..., :h]), sig(z[..., h:2 * h]), np.tanh(z[..., 2 * h:3 * h]), sig(z[..., 3 * h:])],
                          axis=-1)


@pytest.mark.parametrize("shape", [(3, 8), (2, 5, 12), (4,)])
def test_values_are_sigmoid_sigmoid_tanh_sigmoid_by_block(shape):
    z = RNG.normal(scale=3, size=shape)
    np.testing.assert_allclose(LSTMGatesOp()(Variable.from_numpy(z)).data, oracle(z), rtol=1e-12, atol=0)


@pytest.mark.parametrize("shape", [(3, 8), (2, 2, 4)])
def test_gradient_matches_central_differences(shape):
    check_operator(LSTMGatesOp, RNG.normal(scale=2, size=shape))


def test_float32_stays_float32_and_is_accurate():
    z = RNG.normal(scale=3, size=(64, 256)).astype(np.float32)
    y = LSTMGatesOp()(Variable.from_numpy(z))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.data, oracle(z), rtol=1e-6, atol=1e-7)
    check_operator(LSTMGatesOp, z[:4, :8])


def test_blocks_along_axis_0_are_the_transposed_layout():
    z = RNG.normal(scale=3, size=(3, 8))
    np.testing.assert_allclose(LSTMGatesOp(axis=0)(Variable.from_numpy(z.T)).data, oracle(z).T, rtol=1e-12, atol=0)
    check_operator(lambda: LSTMGatesOp(axis=0), RNG.normal(size=(8, 3)))
    with pytest.raises(ShapeError, match=r"axis 0 must hold four gate blocks.*\(3, 8\)"):
        LSTMGatesOp(axis=0)(Variable.from_numpy(z))
    with pytest.raises(ShapeError, match=r"axis 2 must hold"):
        LSTMGatesOp(axis=2)(Variable.from_numpy(z))


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize("axis", [-1, 0])
def test_narrow_blocks_in_either_layout_match_the_oracle(width, axis):
    """Blocks one entry wide are strided single columns in the batch-first layout (a NumPy 2.4.6 bug in
    np.negative with strided out= made the o block wrong there)."""
    z = RNG.normal(scale=3, size=(9, 4 * width)).astype(np.float32)
    x = z if axis == -1 else np.ascontiguousarray(z.T)
    y = LSTMGatesOp(axis=axis)(Variable.from_numpy(x)).data
    np.testing.assert_allclose(y if axis == -1 else y.T, oracle(z), rtol=1e-6, atol=1e-7)


def test_integers_give_floats():
    y = LSTMGatesOp()(Variable.from_numpy(np.array([[0, 0, 0, 0]])))
    assert y.dtype.kind == "f"
    np.testing.assert_array_equal(y.data, [[0.5, 0.5, 0.0, 0.5]])


def test_saturated_inputs_give_limits_and_no_warning():
    z = np.array([[-1e4, 1e4, -1e4, 1e4], [1e4, -1e4, 1e4, -1e4]], dtype=np.float32)
    x = Variable.from_numpy(z)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        y = LSTMGatesOp()(x)
        Engine.backward(SumOp()(y))
    np.testing.assert_array_equal(y.data, [[0, 1, -1, 1], [1, 0, 1, 0]])
    np.testing.assert_array_equal(x.grad, np.zeros_like(z))


def test_the_blocks_are_in_the_order_i_f_g_o():
    """Only the third block goes through tanh: an input of 0 there gives 0, elsewhere σ(0) = 0.5."""
    y = LSTMGatesOp()(Variable.from_numpy(np.zeros((1, 8)))).data
    np.testing.assert_array_equal(y, [[0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5]])


@pytest.mark.parametrize("shape", [(3, 6), (5,), ()])
def test_a_width_that_is_not_four_blocks_is_refused_naming_the_shape(shape):
    with pytest.raises(ShapeError, match=rf"LSTMGatesOp: axis -1 must hold four gate blocks.*{shape}"):
        LSTMGatesOp()(Variable.from_numpy(np.ones(shape)))


def test_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    z = RNG.normal(scale=2, size=(5, 12))
    w = RNG.normal(size=(5, 12))
    x = Variable.from_numpy(z)
    Engine.backward(SumOp()(MulOp()(LSTMGatesOp()(x), Variable.from_numpy(w))))
    zt = torch.tensor(z, requires_grad=True)
    i, f, g, o = zt.chunk(4, dim=1)
    yt = torch.cat([i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()], dim=1)
    (yt * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad, zt.grad.numpy(), rtol=1e-12, atol=1e-14)


# The two state equations, c_t = f ⊙ c + i ⊙ g and h_t = o ⊙ tanh(c_t), against the blocks taken by hand (float64).

def blocks(gates: np.ndarray, axis: int) -> list[np.ndarray]:
    return np.split(gates, 4, axis=axis)


@pytest.mark.parametrize("axis", [0, -1])
def test_cell_state_is_f_c_plus_i_g_and_matches_central_differences(axis):
    gates = RNG.random((8, 3) if axis == 0 else (3, 8))
    c = RNG.normal(size=(2, 3) if axis == 0 else (3, 2))
    i, f, g, _ = blocks(gates, axis)
    got = LSTMCellStateOp(axis=axis)(Variable.from_numpy(gates), Variable.from_numpy(c)).data
    np.testing.assert_allclose(got, f * c + i * g, rtol=1e-15, atol=0)
    check_operator(lambda: LSTMCellStateOp(axis=axis), gates, c)


@pytest.mark.parametrize("axis", [0, -1])
def test_cell_state_from_the_zero_state_is_i_g(axis):
    gates = RNG.random((8, 3) if axis == 0 else (3, 8))
    i, _, g, _ = blocks(gates, axis)
    np.testing.assert_allclose(LSTMCellStateOp(axis=axis)(Variable.from_numpy(gates)).data, i * g, rtol=1e-15)
    check_operator(lambda: LSTMCellStateOp(axis=axis), gates)


@pytest.mark.parametrize("axis", [0, -1])
def test_hidden_is_o_tanh_c_and_matches_central_differences(axis):
    gates = RNG.random((8, 3) if axis == 0 else (3, 8))
    c = RNG.normal(size=(2, 3) if axis == 0 else (3, 2))
    o = blocks(gates, axis)[3]
    got = LSTMHiddenOp(axis=axis)(Variable.from_numpy(gates), Variable.from_numpy(c)).data
    np.testing.assert_allclose(got, o * np.tanh(c), rtol=1e-15, atol=0)
    check_operator(lambda: LSTMHiddenOp(axis=axis), gates, c)


def test_state_ops_against_pytorch_in_float32():
    torch = pytest.importorskip("torch")
    gates = RNG.random((256, 64)).astype(np.float32)
    c = RNG.normal(size=(64, 64)).astype(np.float32)
    gv, cv = Variable.from_numpy(gates), Variable.from_numpy(c)
    c_next = LSTMCellStateOp(axis=0)(gv, cv)
    h = LSTMHiddenOp(axis=0)(gv, c_next)
    Engine.backward(SumOp()(MulOp()(h, h)))
    gt = torch.tensor(gates, requires_grad=True)
    ct = torch.tensor(c, requires_grad=True)
    i, f, g, o = gt.chunk(4, dim=0)
    ht = o * torch.tanh(f * ct + i * g)
    (ht * ht).sum().backward()
    assert c_next.dtype == np.float32 and h.dtype == np.float32
    np.testing.assert_allclose(h.data, ht.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gv.grad, gt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cv.grad, ct.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [LSTMCellStateOp, LSTMHiddenOp])
def test_state_ops_name_bad_shapes(op):
    with pytest.raises(ShapeError, match=rf"{op.__name__}: axis 0 must hold four gate blocks.*\(6, 3\)"):
        op(axis=0)(Variable.from_numpy(np.zeros((6, 3))), Variable.from_numpy(np.zeros((2, 3))))
    with pytest.raises(ShapeError, match=rf"{op.__name__}: c\w* has shape \(3, 3\); gates of shape \(8, 3\) need "
                                         r"\(2, 3\)"):
        op(axis=0)(Variable.from_numpy(np.zeros((8, 3))), Variable.from_numpy(np.zeros((3, 3))))
