"""gradcheck and check_operator: they pass correct gradients, catch wrong ones, and handle kinks and float32."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_lab import GradcheckError, Operator, Variable, check_operator, gradcheck
from autograd_lab.ops import AddOp, ExpOp, MulOp, ReLUOp, SumOp


class Sin(Operator):
    """sin with a correct derivative."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.sin(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy * np.cos(self.inputs[0])]


class SinWrongSign(Sin):
    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [-gy * np.cos(self.inputs[0])]


class SquareWrongAtOneElement(Operator):
    """x² whose gradient is wrong only for the element at index (1, 2)."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x * x

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        g = 2 * self.inputs[0] * gy
        g[1, 2] += 0.1
        return [g]


class ReLUClaimsTwoAtZero(Operator):
    """ReLU with the invalid 'derivative' 2 at 0 (not between the one-sided slopes 0 and 1)."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        return [gy * np.where(x == 0, 2.0, x > 0)]


class UpcastToFloat64(Operator):
    def forward(self, x: np.ndarray) -> np.ndarray:
        return x.astype(np.float64) * 2

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy * 2]


def test_passes_a_correct_gradient_and_reports_the_worst_element():
    x = np.array([[0.1, 0.5], [1.0, 2.0]])
    report = check_operator(Sin, x)
    assert report.checked == 4 and report.input_index == 0 and report.rel_error < 1e-8 and not report.at_kink


def test_catches_a_wrong_gradient_and_names_input_element_values_and_error():
    """For L = Σ sin(x), dL/dx_i = cos(x_i); the wrong sign gives |-c - c| / |c| = relative error 2."""
    x = np.array([0.3, 0.7])
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda v: SumOp()(SinWrongSign()(v)), [x])
    message = str(info.value)
    assert "input 0, element (0,)" in message
    assert f"analytic {-math.cos(0.3):.10g}, numeric {math.cos(0.3):.10g}" in message
    assert "relative error 2" in message


def test_finds_a_single_wrong_element_of_a_matrix_output():
    """The random direction makes every output element count, so one bad entry of a (3, 4) Jacobian is found."""
    with pytest.raises(GradcheckError, match=r"input 0, element \(1, 2\)"):
        check_operator(SquareWrongAtOneElement, np.random.default_rng(0).standard_normal((3, 4)))


def test_gradcheck_of_a_composite_function_of_several_inputs():
    def fn(a: Variable, b: Variable) -> Variable:
        return SumOp()(MulOp()(ExpOp()(a), AddOp()(a, b)))

    rng = np.random.default_rng(1)
    report = gradcheck(fn, [rng.standard_normal(3), rng.standard_normal(3)])
    assert report.checked == 6


def test_wrong_gradient_in_the_second_input_is_attributed_to_it():
    class MulWrongB(MulOp):
        def backward(self, gy):
            ga, gb = super().backward(gy)
            return [ga, gb * 1.5]

    rng = np.random.default_rng(2)
    with pytest.raises(GradcheckError, match="input 1"):
        check_operator(MulWrongB, rng.standard_normal(3), rng.standard_normal(3))


def test_wrt_leaves_inputs_out():
    class MulWrongB(MulOp):
        def backward(self, gy):
            ga, gb = super().backward(gy)
            return [ga, gb * 1.5]

    rng = np.random.default_rng(2)
    report = check_operator(MulWrongB, rng.standard_normal(3), rng.standard_normal(3), wrt=[0])
    assert report.input_index == 0 and report.checked == 3


def test_relu_at_zero_is_not_a_false_failure():
    report = check_operator(ReLUOp, np.array([0.0, -0.5, 0.5]))
    assert report.checked == 3


def test_an_invalid_value_at_the_kink_is_still_caught():
    with pytest.raises(GradcheckError, match=r"element \(0,\).*at a kink"):
        check_operator(ReLUClaimsTwoAtZero, np.array([0.0, 0.5]))


def test_numeric_gradient_is_computed_in_float64_for_float32_inputs():
    """A float32 central difference with eps=1e-6 would be off by ~10%; in float64 it is good to ~1e-9."""
    x = np.array([0.3], dtype=np.float32)
    report = gradcheck(lambda v: SumOp()(ExpOp()(v)), [x])
    assert report.numeric == pytest.approx(math.exp(float(x[0])), rel=1e-8)


def test_check_operator_catches_an_op_that_changes_the_dtype():
    with pytest.raises(GradcheckError, match="output dtype float64, expected float32"):
        check_operator(UpcastToFloat64, np.ones(2, dtype=np.float32))


def test_fn_must_return_a_variable():
    with pytest.raises(TypeError, match="must return a Variable"):
        gradcheck(lambda x: x.data, [np.ones(2)])


def test_custom_tolerances_are_used():
    with pytest.raises(GradcheckError, match="rtol=1e-12"):
        check_operator(Sin, np.array([0.3, 0.7]), eps=1e-3, atol=0.0, rtol=1e-12)


def test_a_single_array_is_one_input():
    report = gradcheck(lambda v: SumOp()(Sin()(v)), np.array([0.1, 0.2, 0.3]))
    assert report.checked == 3


def test_gradcheck_passes_a_function_that_returns_its_input_unchanged():
    """The identity's gradient is 1; a leaf output used to be skipped and reported as 0 (found in review)."""
    gradcheck(lambda v: v, [np.ones(3)])
