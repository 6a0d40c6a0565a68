"""The own-code check used by hidden tests: what it accepts, what it refuses, and that it says why.

Classes here are defined in this test module, so the checks run with ``defined_in=__name__`` (in a notebook the
namespace is ``__main__``, the default).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_lab
import autograd_lab.ops
from autograd_lab import Engine, Operator
from autograd_lab.course.checks import NotOwnCodeError, assert_own_code
from autograd_lab.ops import AddOp as ReferenceAddOp
from autograd_lab.ops._broadcast import sum_to_shape

HERE = __name__


def check(obj: object, reference: object = None, **kwargs: object) -> None:
    assert_own_code(obj, reference, defined_in=HERE, **kwargs)


class OwnAddOp(Operator):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]


def test_own_class_built_from_library_helpers_passes() -> None:
    check(OwnAddOp, ReferenceAddOp)


def test_own_function_passes() -> None:
    def square(x: np.ndarray) -> np.ndarray:
        return x * x

    check(square)


def test_reference_imported_under_the_expected_name_fails_and_says_so() -> None:
    with pytest.raises(NotOwnCodeError, match=r"No points for AddOp: it is the reference .*AddOp imported from"):
        check(ReferenceAddOp, ReferenceAddOp)


def test_library_class_without_reference_given_fails_as_not_written_here() -> None:
    with pytest.raises(NotOwnCodeError, match=r"not written in this notebook .imported from autograd_lab"):
        check(autograd_lab.ops.MulOp)


def test_not_own_code_error_is_an_assertion_so_the_test_cell_fails() -> None:
    assert issubclass(NotOwnCodeError, AssertionError)


def test_subclass_of_the_reference_fails() -> None:
    class AddOp(ReferenceAddOp):
        pass

    with pytest.raises(NotOwnCodeError, match=r"subclasses autograd_lab.ops.arithmetic.AddOp"):
        check(AddOp, ReferenceAddOp)


def test_subclass_of_another_library_op_fails_even_without_reference() -> None:
    class Twice(autograd_lab.ops.MulOp):
        pass

    with pytest.raises(NotOwnCodeError, match=r"subclasses autograd_lab.ops.arithmetic.MulOp"):
        check(Twice)


def test_indirect_subclass_through_own_intermediate_class_fails() -> None:
    class Middle(ReferenceAddOp):
        pass

    class AddOp(Middle):
        pass

    with pytest.raises(NotOwnCodeError, match=r"subclasses"):
        check(AddOp, ReferenceAddOp)


def test_allowed_library_base_passes() -> None:
    class MyEngine(Engine):
        def note(self) -> str:
            return "mine"

    check(MyEngine, may_subclass=(Engine,))


def test_wrapper_delegating_through_a_module_attribute_fails() -> None:
    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return autograd_lab.ops.AddOp().forward(a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls autograd_lab.ops.arithmetic.AddOp"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_delegating_through_a_renamed_global_fails() -> None:
    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return ReferenceAddOp.forward(self, a, b)

    with pytest.raises(NotOwnCodeError, match=r"calls autograd_lab.ops.arithmetic.AddOp"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_delegating_through_a_closure_fails() -> None:
    ref = ReferenceAddOp

    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return ref.forward(self, a, b)

    with pytest.raises(NotOwnCodeError, match=r"calls"):
        check(AddOp, ReferenceAddOp)


def test_import_inside_the_method_body_fails() -> None:
    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            from autograd_lab.ops import AddOp as Hidden

            return Hidden.forward(self, a, b)

    with pytest.raises(NotOwnCodeError, match=r"calls"):
        check(AddOp, ReferenceAddOp)


def test_method_copied_from_the_reference_fails() -> None:
    class AddOp(Operator):
        forward = ReferenceAddOp.forward
        backward = ReferenceAddOp.backward

    with pytest.raises(NotOwnCodeError, match=r"method forward is autograd_lab.ops.arithmetic.AddOp.forward"):
        check(AddOp, ReferenceAddOp)


def test_function_delegating_to_a_reference_method_fails() -> None:
    def topo_sort(root: object) -> list:
        return Engine.topo_sort(root)

    with pytest.raises(NotOwnCodeError, match=r"its body calls autograd_lab.engine.Engine.topo_sort"):
        check(topo_sort, Engine.topo_sort)


def test_using_other_library_classes_is_allowed() -> None:
    class AddThenMul(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            helper = autograd_lab.ops.MulOp  # another op, not the exercise's reference
            assert helper is not None
            return (a + b) * b

    check(AddThenMul, ReferenceAddOp)


def test_object_from_another_module_fails_with_its_origin() -> None:
    with pytest.raises(NotOwnCodeError, match=r"No points for sum_to_shape: .*imported from autograd_lab.ops._broad"):
        check(sum_to_shape)
