"""Variable and Parameter: leaves, read-only values, the read-only op, parents, repr, sanctioned in-place writes."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, InPlaceModificationError, Parameter, Variable
from autograd_lab.ops import AddOp, MulOp, SumOp


def test_from_numpy_makes_a_leaf_with_the_given_values_and_name():
    x = Variable.from_numpy(np.array([1.0, 2.0]), name="x")
    assert x.is_leaf and x.op is None and x.parents == []
    assert x.name == "x" and x.shape == (2,) and x.dtype == np.float64 and x.grad is None
    np.testing.assert_array_equal(x.data, [1.0, 2.0])


def test_from_numpy_keeps_float32():
    assert Variable.from_numpy(np.zeros(3, dtype=np.float32)).dtype == np.float32


@pytest.mark.parametrize("value", [np.arange(3), np.array([True, False]), [1, 2], 7])
def test_integer_and_boolean_input_becomes_float64(value):
    x = Variable.from_numpy(value)
    assert x.dtype == np.float64
    np.testing.assert_array_equal(x.data, np.asarray(value, dtype=np.float64))


@pytest.mark.parametrize("value", [np.array(["a"]), np.array([1 + 2j]), np.array([object()])])
def test_non_numeric_input_raises_type_error(value):
    with pytest.raises(TypeError, match="dtype"):
        Variable.from_numpy(value)


def test_mutating_the_array_passed_to_from_numpy_does_not_change_the_leaf():
    a = np.array([1.0, 2.0, 3.0])
    x = Variable.from_numpy(a)
    a[0] = 100.0
    np.testing.assert_array_equal(x.data, [1.0, 2.0, 3.0])


def test_writing_into_data_in_place_raises():
    x = Variable.from_numpy([1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        x.data[0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        x.data += 1.0


def test_writing_into_an_internal_nodes_data_raises():
    y = AddOp()(Variable.from_numpy([1.0]), Variable.from_numpy([2.0]))
    with pytest.raises(ValueError, match="read-only"):
        y.data[0] = 0.0
    with pytest.raises(AttributeError, match="AddOp"):
        y.data = np.array([0.0])


def test_assigning_op_raises_attribute_error():
    y = AddOp()(Variable.from_numpy([1.0]), Variable.from_numpy([2.0]))
    with pytest.raises(AttributeError):
        y.op = None
    with pytest.raises(AttributeError):
        Variable.from_numpy([1.0]).op = AddOp()


def test_parents_are_in_input_order_with_duplicates_kept():
    a, b = Variable.from_numpy([1.0]), Variable.from_numpy([2.0])
    y = MulOp()(b, a)
    assert y.parents[0] is b and y.parents[1] is a
    z = MulOp()(a, a)
    assert len(z.parents) == 2 and z.parents[0] is a and z.parents[1] is a


def test_new_makes_an_internal_node():
    op = AddOp()
    a = Variable.from_numpy([1.0])
    data = np.array([2.0])
    data.setflags(write=False)
    node = Variable._new(data, op, [a, a])
    assert node.op is op and not node.is_leaf and node.parents == [a, a] and node.data is data


def test_repr_shows_name_shape_dtype_op_and_grad_shape():
    w = Variable.from_numpy(np.zeros((2, 3), dtype=np.float32), name="w")
    assert repr(w) == "Variable('w', shape=2x3, dtype=float32, leaf, grad=None)"
    y = SumOp()(w)
    assert repr(y) == "Variable(shape=scalar, dtype=float32, op=SumOp, grad=None)"
    Engine.backward(y)
    assert repr(w) == "Variable('w', shape=2x3, dtype=float32, leaf, grad=2x3)"
    assert "released" in repr(y)


def test_leaf_data_assignment_copies_and_stays_read_only():
    x = Variable.from_numpy([1.0, 2.0])
    new = np.array([3.0, 4.0])
    x.data = new
    new[0] = 0.0
    np.testing.assert_array_equal(x.data, [3.0, 4.0])
    assert not x.data.flags.writeable


def test_item_numpy_ndim_size():
    x = Variable.from_numpy([[2.5]])
    assert x.item() == 2.5 and x.ndim == 2 and x.size == 1
    copy = x.numpy()
    copy[0, 0] = 1.0
    assert x.item() == 2.5


def test_parameter_is_a_trainable_leaf_and_add_updates_in_place():
    p = Parameter(np.array([1.0, 2.0], dtype=np.float32), name="p")
    assert isinstance(p, Variable) and p.is_leaf and p.dtype == np.float32
    address = p.data.ctypes.data  # not a reference: holding one would make add_ copy (copy-on-write)
    p.add_(np.array([0.5, -1.0]))
    np.testing.assert_array_equal(p.data, [1.5, 1.0])
    assert p.data.ctypes.data == address and not p.data.flags.writeable and p.dtype == np.float32


def test_parameter_update_never_changes_a_value_someone_else_holds():
    """Copy-on-write: a reshape output (a view) and a retained graph keep the values they saw (found in review)."""
    from autograd_lab.ops import MulOp, ReshapeOp, SumOp

    w = Parameter([1.0, 2.0])
    x = Variable.from_numpy([1.0, 1.0])
    view = ReshapeOp((2,))(w)
    loss = SumOp()(MulOp()(view, x))
    held = w.data
    w.add_(np.array([10.0, 10.0]))
    np.testing.assert_array_equal(view.data, [1.0, 2.0])
    np.testing.assert_array_equal(held, [1.0, 2.0])
    np.testing.assert_array_equal(w.data, [11.0, 12.0])
    Engine.backward(loss, inputs=[x])
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])  # d(w·x)/dx with the w the graph was built from


def test_parameter_copy_checks_the_shape():
    p = Parameter(np.zeros(3))
    p.copy_(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(p.data, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        p.copy_(np.zeros(2))


def test_backward_after_parameter_update_raises_in_place_error():
    """A graph that saved the old value of a Parameter must not silently use the new one."""
    w = Parameter(np.array([2.0]), name="w")
    x = Variable.from_numpy([3.0])
    y = MulOp()(w, x)
    w.add_(np.array([1.0]))
    with pytest.raises(InPlaceModificationError, match="MulOp input 0"):
        Engine.backward(y)


def test_from_numpy_without_copy_still_copies_a_view_whose_base_could_change():
    base = np.zeros(4)
    v = Variable.from_numpy(base[:2], copy=False)
    base[0] = 99.0
    np.testing.assert_array_equal(v.data, [0.0, 0.0])
    owned = np.zeros(2)
    w = Variable.from_numpy(owned, copy=False)
    with pytest.raises(ValueError, match="read-only"):
        owned[0] = 1.0  # the caller's own array is now read-only: no silent change
    assert w.data[0] == 0.0
