"""The own-code check used by hidden tests: what it accepts, what it refuses, and that it says why.

Classes here are defined in this test module, so the checks run with ``defined_in=__name__`` (in a notebook the
namespace is ``__main__``, the default).
"""

from __future__ import annotations

import functools
import inspect
import textwrap
import time
import types

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


# --- wrappers and copies that reach the reference in other ways -------------------------------------------------


def test_reference_source_text_executed_fails() -> None:
    namespace = {"__name__": HERE, "Operator": Operator, "np": np, "sum_to_shape": sum_to_shape}
    exec(textwrap.dedent(inspect.getsource(ReferenceAddOp)), namespace)
    with pytest.raises(NotOwnCodeError, match=r"code made from text with exec or compile"):
        check(namespace["AddOp"], ReferenceAddOp)


def test_a_function_that_uses_a_dataclass_or_namedtuple_of_the_notebook_is_own_code() -> None:
    """Chapter 11's capture_tape builds a Tape dataclass; dataclasses and namedtuple make their methods with exec,
    so their code objects say "<string>": that boilerplate is not a copy of the reference (regression: 8/10)."""
    source = textwrap.dedent("""
        import collections
        import dataclasses

        @dataclasses.dataclass
        class Tape:
            steps: list

        Pair = collections.namedtuple("Pair", "a b")

        def capture(fn):
            return Tape([Pair(fn, 1)])
    """)
    namespace = {"__name__": HERE}
    exec(compile(source, "<cell 3: capture_tape_code>", "exec"), namespace)
    check(namespace["capture"], ReferenceAddOp)


def test_reference_module_source_compiled_under_a_cell_like_name_fails() -> None:
    namespace = {"__name__": HERE}
    source = inspect.getsource(inspect.getmodule(ReferenceAddOp))
    exec(compile(source, "<cell 4: add_op_code>", "exec"), namespace)
    with pytest.raises(NotOwnCodeError, match=r"runs the code object of .*AddOp.*exact copy"):
        check(namespace["AddOp"], ReferenceAddOp)


def test_code_object_cloned_into_a_new_function_fails() -> None:
    clone = types.FunctionType(ReferenceAddOp.forward.__code__, globals(), "forward")

    class AddOp(Operator):
        forward = clone

        def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
            return [gy, gy]

    with pytest.raises(NotOwnCodeError, match=r"method forward runs the code object of"):
        check(AddOp, ReferenceAddOp)


def test_code_object_copied_with_another_file_name_but_its_lines_fails() -> None:
    code = ReferenceAddOp.backward.__code__.replace(co_filename="<cell 3: add_op_code>")

    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return a + b

    AddOp.backward = types.FunctionType(code, globals(), "backward")  # type: ignore[method-assign]
    with pytest.raises(NotOwnCodeError, match=r"method backward runs the code object of .*AddOp.*exact copy"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_through_functools_partial_fails() -> None:
    helper = functools.partial(ReferenceAddOp.forward, None)

    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return helper(a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_partialmethod_class_attribute_fails() -> None:
    class AddOp(Operator):
        forward = functools.partialmethod(ReferenceAddOp.forward)

    with pytest.raises(NotOwnCodeError, match=r"calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_through_a_bound_method_fails() -> None:
    bound = ReferenceAddOp().forward

    def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return bound(a, b)

    with pytest.raises(NotOwnCodeError, match=r"its body (calls|uses an instance of) .*AddOp"):
        check(add, ReferenceAddOp)


def test_wrapper_through_a_default_argument_fails() -> None:
    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray, _impl: object = ReferenceAddOp) -> np.ndarray:
            return _impl.forward(self, a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_through_a_nested_container_fails() -> None:
    table = {"ops": [("add", (ReferenceAddOp,))]}

    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return table["ops"][0][1][0].forward(self, a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_reference_instance_as_class_attribute_fails() -> None:
    class AddOp(Operator):
        impl = ReferenceAddOp()

        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return self.impl.forward(a, b)

    with pytest.raises(NotOwnCodeError, match=r"class attribute impl uses an instance of .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_getattr_chain_with_constant_names_fails() -> None:
    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            ops = getattr(autograd_lab, "ops")  # noqa: B009 (the hostile case)
            return getattr(ops, "Add" + "Op")().forward(a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_wrapper_through_an_own_helper_and_an_instance_attribute_fails() -> None:
    class Holder:
        def __init__(self) -> None:
            self.target = ReferenceAddOp

    holder = Holder()

    def helper(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return holder.target().forward(a, b)

    class AddOp(Operator):
        def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return helper(a, b)

    with pytest.raises(NotOwnCodeError, match=r"method forward calls .*AddOp"):
        check(AddOp, ReferenceAddOp)


def test_honest_code_that_compiles_like_the_reference_passes() -> None:
    # The reference's forward is also `return a + b`: equal bytecode alone is no proof of copying.
    class AddOp(Operator):
        def forward(self, a, b):  # type: ignore[no-untyped-def]
            return a + b

        def backward(self, gy):  # type: ignore[no-untyped-def]
            a, b = self.inputs
            return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]

    check(AddOp, ReferenceAddOp)


def test_walk_is_bounded_on_huge_cyclic_structures() -> None:
    big: list = list(range(200_000))
    loop: list = [big]
    loop.append(loop)

    def total() -> int:
        return len(loop) + len(big)

    start = time.perf_counter()
    check(total, ReferenceAddOp)
    assert time.perf_counter() - start < 2.0
