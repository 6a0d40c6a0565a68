"""Linear: y = x Wᵀ + b built from MatMulOp(transpose_b=True) and AddOp; values and gradients against NumPy/PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable
from autograd_lab.nn import Linear
from autograd_lab.ops import AddOp, MatMulOp, SumOp


def test_parameter_shapes_follow_pytorch_layout_and_bias_starts_at_zero():
    layer = Linear(784, 128, rng=0)
    assert layer.weight.shape == (128, 784) and layer.bias.shape == (128,)
    assert layer.weight.dtype == np.float32 and layer.bias.dtype == np.float32
    np.testing.assert_array_equal(layer.bias.data, np.zeros(128))
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]


def test_forward_is_x_times_w_transposed_plus_b_and_the_graph_shows_both_ops():
    rng = np.random.default_rng(0)
    layer = Linear(4, 3, rng=1, dtype=np.float64)
    layer.bias.copy_(rng.standard_normal(3))
    x = rng.standard_normal((5, 4))
    y = layer(Variable.from_numpy(x))
    np.testing.assert_allclose(y.data, x @ layer.weight.data.T + layer.bias.data, rtol=1e-14)
    assert isinstance(y.op, AddOp) and y.parents[1] is layer.bias
    mm = y.parents[0]
    assert isinstance(mm.op, MatMulOp) and mm.op.transpose_b and mm.parents[1] is layer.weight


def test_gradients_are_the_hand_derived_ones():
    """For L = Σ y ⊙ G: dW = Gᵀ x, db = Σ_n G_n, dx = G W (float64, exact up to rounding)."""
    rng = np.random.default_rng(1)
    layer = Linear(4, 3, rng=2, dtype=np.float64)
    x = Variable.from_numpy(rng.standard_normal((5, 4)))
    g = rng.standard_normal((5, 3))
    y = layer(x)
    Engine.backward(y, grad=g)
    np.testing.assert_allclose(layer.weight.grad, g.T @ x.data, rtol=1e-12)
    np.testing.assert_allclose(layer.bias.grad, g.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(x.grad, g @ layer.weight.data, rtol=1e-12)


def test_gradients_match_pytorch_linear():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    layer = Linear(6, 3, rng=3)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    loss = SumOp()(layer(Variable.from_numpy(x)))
    Engine.backward(loss)
    w = torch.tensor(layer.weight.data, requires_grad=True)
    b = torch.tensor(layer.bias.data, requires_grad=True)
    torch.nn.functional.linear(torch.from_numpy(x), w, b).sum().backward()
    np.testing.assert_allclose(layer.weight.grad, w.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(layer.bias.grad, b.grad.numpy(), rtol=1e-6)


def test_wrong_input_width_raises_shape_error_naming_matmul_and_shapes():
    layer = Linear(4, 3, rng=0)
    with pytest.raises(ShapeError, match=r"MatMulOp.*\(2, 5\)"):
        layer(Variable.from_numpy(np.zeros((2, 5), dtype=np.float32)))


@pytest.mark.parametrize(("n_in", "n_out"), [(0, 3), (3, -1), (2.5, 3), (True, 3)])
def test_sizes_must_be_positive_integers(n_in, n_out):
    with pytest.raises(ValueError, match="must be a positive integer"):
        Linear(n_in, n_out)


def test_init_choice_and_seed_decide_the_weights():
    a, b = Linear(30, 20, init="xavier", rng=5), Linear(30, 20, init="xavier", rng=5)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    assert np.abs(a.weight.data).max() <= np.sqrt(6 / 50)
    assert np.abs(Linear(30, 20, init="normal", rng=5).weight.data).std() < 0.02
