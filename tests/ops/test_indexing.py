"""SliceOp, SelectOp, StackOp: values match NumPy, gradients go back to the elements taken, bad ranges are refused."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import SelectOp, SliceOp, StackOp, SumOp

X = np.random.default_rng(7).standard_normal((2, 3, 8))


@pytest.mark.parametrize(("start", "stop", "axis"), [(0, 2, -1), (2, 4, 2), (6, 8, -1), (1, 3, 1), (0, 1, 0)])
def test_slice(start, stop, axis):
    y = SliceOp(start, stop, axis)(Variable.from_numpy(X))
    np.testing.assert_array_equal(y.data, np.take(X, range(start, stop), axis=axis))
    check_operator(lambda: SliceOp(start, stop, axis), X)


def test_slice_gradient_is_zero_outside_the_block():
    x = Variable.from_numpy(np.arange(8.0).reshape(2, 4))
    Engine.backward(SumOp()(SliceOp(1, 3)(x)))
    np.testing.assert_array_equal(x.grad, [[0, 1, 1, 0], [0, 1, 1, 0]])


@pytest.mark.parametrize(("start", "stop"), [(6, 9), (3, 3), (-1, 2)])
def test_a_slice_outside_the_axis_is_refused_naming_range_and_shape(start, stop):
    with pytest.raises(ShapeError, match=rf"SliceOp.*\[{start}, {stop}\).*length 8.*\(2, 3, 8\)"):
        SliceOp(start, stop)(Variable.from_numpy(X))


@pytest.mark.parametrize(("index", "axis"), [(0, 1), (2, 1), (-1, 1), (1, 0), (5, 2)])
def test_select(index, axis):
    y = SelectOp(index, axis)(Variable.from_numpy(X))
    np.testing.assert_array_equal(y.data, np.take(X, index, axis=axis))
    check_operator(lambda: SelectOp(index, axis), X)


def test_select_out_of_range_is_refused():
    with pytest.raises(ShapeError, match=r"SelectOp: index 3 .*axis 1 of length 3"):
        SelectOp(3)(Variable.from_numpy(X))
    with pytest.raises(ShapeError, match=r"SelectOp: axis 3 is out of range"):
        SelectOp(0, axis=3)(Variable.from_numpy(X))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis):
    parts = [X[:, :, i] for i in range(3)]
    y = StackOp(axis)(*[Variable.from_numpy(p) for p in parts])
    np.testing.assert_array_equal(y.data, np.stack(parts, axis=axis))
    check_operator(lambda: StackOp(axis), *parts)


def test_stack_of_one_input_used_twice_sums_both_gradients():
    x = Variable.from_numpy([1.0, 2.0])
    Engine.backward(SumOp()(StackOp(0)(x, x)))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_stack_of_different_shapes_is_refused_listing_them():
    with pytest.raises(ShapeError, match=r"StackOp.*\(2,\), \(3,\)"):
        StackOp(0)(Variable.from_numpy(np.zeros(2)), Variable.from_numpy(np.zeros(3)))


def test_select_and_stack_undo_each_other():
    x = Variable.from_numpy(X)
    y = StackOp(axis=1)(*[SelectOp(t, axis=1)(x) for t in range(3)])
    np.testing.assert_array_equal(y.data, X)


@pytest.mark.parametrize("op", [lambda: SliceOp(0, 2), lambda: SelectOp(1)])
def test_float32_stays_float32(op):
    y = op()(Variable.from_numpy(X.astype(np.float32)))
    assert y.dtype == np.float32


torch = pytest.importorskip("torch", reason="PyTorch is an optional extra")


def test_slice_select_stack_gradients_match_pytorch():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((2, 2, 3))
    x = Variable.from_numpy(X)
    y = StackOp(axis=1)(SliceOp(2, 5)(SelectOp(0, axis=1)(x)), SliceOp(4, 7)(SelectOp(2, axis=1)(x)))
    Engine.backward(y, grad=g)
    xt = torch.tensor(X, requires_grad=True)
    yt = torch.stack([xt.select(1, 0)[..., 2:5], xt.select(1, 2)[..., 4:7]], dim=1)
    yt.backward(torch.from_numpy(g))
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=0, atol=1e-15)


@pytest.mark.parametrize("container", [list, tuple])
def test_stack_given_a_list_says_to_unpack_it(container):
    states = container(Variable.from_numpy(np.ones((2, 3))) for _ in range(3))
    with pytest.raises(TypeError) as info:
        StackOp(axis=1)(states)
    message = str(info.value)
    assert f"input 0 is a {container.__name__} of 3 items" in message and "*states" in message
    assert __file__ in message, "the message names the calling line"
    assert StackOp(axis=1)(*states).shape == (2, 3, 3), "unpacked, the same states stack fine"
