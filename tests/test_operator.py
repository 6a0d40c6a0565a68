"""The Operator base class: graph wiring, one call per instance, and the checks it makes on forward and backward."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Operator, OperatorReuseError, ShapeError, Variable
from autograd_lab.ops import AddOp, MatMulOp, MulOp, ReLUOp


class Double(Operator):
    """y = 2x, written the way every op is: forward and backward on raw arrays."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return 2 * x

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [2 * gy]


class WrongShapeGrad(Operator):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy, gy]  # forgets to reduce the broadcast gradient of b


class WrongCount(Operator):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy]


class NoneGrad(Operator):
    def forward(self, a: np.ndarray) -> np.ndarray:
        return a.copy()

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [None]


def test_call_runs_forward_and_wires_the_graph():
    x = Variable.from_numpy([1.0, 2.0])
    op = Double()
    y = op(x)
    np.testing.assert_array_equal(y.data, [2.0, 4.0])
    assert y.op is op and y.parents == [x] and not y.is_leaf
    np.testing.assert_array_equal(op.inputs[0], [1.0, 2.0])
    assert op.output is y.data and not y.data.flags.writeable


def test_a_user_defined_operator_takes_part_in_backward():
    x = Variable.from_numpy([1.0, 2.0])
    Engine.backward(Double()(x), grad=np.array([1.0, 10.0]))
    np.testing.assert_array_equal(x.grad, [2.0, 20.0])


def test_calling_an_operator_twice_raises():
    op = AddOp()
    x = Variable.from_numpy([1.0])
    op(x, x)
    with pytest.raises(OperatorReuseError, match=r"AddOp instance was already called"):
        op(x, x)


class SumOfAll(Operator):
    """Elementwise sum of any number of inputs: a ``forward(*xs)``."""

    def forward(self, *xs: np.ndarray) -> np.ndarray:
        return sum(xs[1:], xs[0])

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy] * len(self.inputs)


@pytest.mark.parametrize(
    ("make_op", "n_inputs", "suggestion"),
    [
        (lambda: MulOp(), 2, "MulOp()(a, b)"),  # issue 14: the message used to suggest MulOp(...)(x)
        (lambda: MatMulOp(transpose_b=True), 2, "MatMulOp(transpose_a=False, transpose_b=True)(a, b)"),
        (lambda: ReLUOp(), 1, "ReLUOp()(x)"),
        (lambda: SumOfAll(), 3, "SumOfAll()(x0, x1, x2)"),  # forward(*xs): as many as were passed
    ],
)
def test_reuse_error_suggests_a_call_with_the_ops_own_number_of_arguments(make_op, n_inputs, suggestion):
    op = make_op()
    xs = [Variable.from_numpy(np.ones((2, 2))) for _ in range(n_inputs)]
    op(*xs)
    with pytest.raises(OperatorReuseError) as info:
        op(*xs)
    assert str(info.value).endswith(f"create a new one for each use: {suggestion}")


def test_non_variable_input_raises_type_error_naming_the_op_and_index():
    with pytest.raises(TypeError, match=r"AddOp input 1 must be a Variable, got ndarray"):
        AddOp()(Variable.from_numpy([1.0]), np.array([1.0]))


def test_forward_shape_error_names_op_shapes_and_the_callers_line():
    a = Variable.from_numpy(np.zeros((2, 3)))
    b = Variable.from_numpy(np.zeros((4, 5)))
    with pytest.raises(ShapeError) as info:
        MatMulOp()(a, b)  # the line named in the message
    message = str(info.value)
    assert "MatMulOp" in message and "(2, 3)" in message and "(4, 5)" in message
    assert f"{__file__}:{info.tb.tb_lineno}" in message


def test_broadcast_failure_in_add_is_a_shape_error():
    with pytest.raises(ShapeError, match=r"AddOp.*\(2,\), \(3,\)"):
        AddOp()(Variable.from_numpy(np.zeros(2)), Variable.from_numpy(np.zeros(3)))


def test_backward_gradient_of_wrong_shape_names_op_input_index_and_shapes():
    a = Variable.from_numpy(np.zeros((4, 3)))
    b = Variable.from_numpy(np.zeros(3))
    y = WrongShapeGrad()(a, b)
    with pytest.raises(ShapeError, match=r"WrongShapeGrad\.backward: gradient for input 1 has shape \(4, 3\), "
                       r"expected \(3,\)"):
        Engine.backward(y, grad=np.ones((4, 3)))


def test_backward_with_wrong_number_of_gradients_raises():
    x = Variable.from_numpy([1.0])
    y = WrongCount()(x, x)
    with pytest.raises(ShapeError, match=r"WrongCount\.backward must return a list with one gradient per input \(2\)"):
        Engine.backward(y)


def test_backward_returning_none_for_a_needed_gradient_raises():
    x = Variable.from_numpy([1.0])
    with pytest.raises(ShapeError, match=r"NoneGrad\.backward returned None for input 0"):
        Engine.backward(NoneGrad()(x))


def test_needs_grad_lets_backward_skip_inputs_nobody_asked_for():
    x = Variable.from_numpy([2.0])
    w = Variable.from_numpy([3.0])
    y = MulOp()(x, w)
    op = y.op
    Engine.backward(y, inputs=[w])
    assert op.needs_grad(1) and not op.needs_grad(0)
    assert x.grad is None
    np.testing.assert_array_equal(w.grad, [2.0])


def test_gradients_are_cast_to_the_inputs_dtype():
    class Float64Grad(Operator):
        def forward(self, x: np.ndarray) -> np.ndarray:
            return x * 2

        def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
            return [(gy * 2).astype(np.float64)]

    x = Variable.from_numpy(np.ones(2, dtype=np.float32))
    Engine.backward(Float64Grad()(x), grad=np.ones(2, dtype=np.float32))
    assert x.grad.dtype == np.float32


def test_repr_shows_the_configuration():
    assert repr(MatMulOp(transpose_b=True)) == "MatMulOp(transpose_a=False, transpose_b=True)"
    assert Double().config() == {}


class WritesIntoGy(Operator):
    """A backward that scales gy in place: the mistake chapter 06 warns about."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return 2 * x

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        gy *= 2
        return [gy]


@pytest.mark.parametrize("depth", [1, 2], ids=["gy is the seed", "gy comes from another op"])
def test_a_write_into_gy_fails_loudly(depth: int) -> None:
    x = Variable.from_numpy(np.ones(3))
    y = WritesIntoGy()(x)
    if depth == 2:
        y = Double()(y)
    with pytest.raises(ValueError, match="read-only"):
        Engine.backward(y, grad=np.ones(3))


def test_a_read_only_gy_still_accumulates_into_leaves() -> None:
    # AddOp hands gy itself to both inputs; the leaf x receives it twice and must sum into its own array.
    x = Variable.from_numpy(np.array([1.0, 2.0]))
    y = AddOp()(x, x)
    Engine.backward(y, grad=np.array([3.0, 4.0]))
    np.testing.assert_array_equal(x.grad, [6.0, 8.0])
    x.grad += 1  # the leaf's gradient is its own, writable array
    np.testing.assert_array_equal(x.grad, [7.0, 9.0])


class WritesIntoInput(Operator):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.how == "+=":
            x += 1
        else:
            x[0] = 1
        return x

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy]


@pytest.mark.parametrize("how", ["+=", "x[0] = 1"])
def test_a_write_into_an_input_names_the_op_and_is_not_called_a_shape_error(how: str) -> None:
    x = Variable.from_numpy(np.zeros(3))
    with pytest.raises(ValueError, match=r"WritesIntoInput.forward wrote into one of its inputs.*read-only") as info:
        WritesIntoInput(how)(x)
    assert not isinstance(info.value, ShapeError)
    np.testing.assert_array_equal(x.data, np.zeros(3))  # nothing was lost
