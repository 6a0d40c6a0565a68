"""Engine: Kahn's topological sort, backward (accumulation, retain_graph, release), forward re-runs, big graphs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from autograd_lab import CycleError, Engine, GraphReleasedError, Parameter, ShapeError, Variable
from autograd_lab.ops import AddOp, ExpOp, MulOp, SumOp


def leaf(value: float | list[float], name: str | None = None) -> Variable:
    return Variable.from_numpy(np.array(value, dtype=np.float64), name=name)


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def stack_depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


# -- the cases of issue 2 ---------------------------------------------------------------------------------------------
def test_issue_case_x3_gives_w108_and_dw_dx_135():
    """x=3; y=x·x; z=y+x; w=z·y: w = 12·9 = 108, dw/dx = (2x+1)·x² + (x²+x)·2x = 63 + 72 = 135."""
    x = leaf(3.0)
    y = MulOp()(x, x)
    z = AddOp()(y, x)
    w = MulOp()(z, y)
    Engine.backward(w)
    assert w.data == 108.0
    assert x.grad == 135.0


def test_issue_case_chain_of_5000_multiplications_with_the_default_recursion_limit():
    """1.001**5000 = exp(5000·ln 1.001) = 148.042836...; d/dx of x·1.001**5000 at x=1 is the same number."""
    with recursion_limit(1000):
        x = leaf(1.0)
        h = x
        for _ in range(5000):
            h = MulOp()(h, leaf(1.001))
        Engine.backward(h)
    assert h.data == pytest.approx(148.042836, abs=1e-6)
    assert x.grad == pytest.approx(148.042836, abs=1e-6)
    assert x.grad == pytest.approx(1.001**5000, rel=1e-12)


def test_issue_case_retain_graph_accumulates_and_zeroing_restarts():
    """a=3, b=2, c=a+b, d=1, e=c·d: de/da = de/db = d = 1, de/dd = c = 5."""
    a, b, d = leaf(3.0), leaf(2.0), leaf(1.0)
    c = AddOp()(a, b)
    e = MulOp()(c, d)
    Engine.backward(e, retain_graph=True)
    assert (a.grad, b.grad, d.grad) == (1.0, 1.0, 5.0)
    Engine.backward(e, retain_graph=True)
    assert (a.grad, b.grad, d.grad) == (2.0, 2.0, 10.0)
    for v in (a, b, d):
        v.grad.fill(0.0)  # zeroing in place, as an optimizer's zero_grad may do
    Engine.backward(e)
    assert (a.grad, b.grad, d.grad) == (1.0, 1.0, 5.0)
    for v in (a, b, d):
        v.grad = None  # zeroing by dropping the buffer works too, but the graph is now released
    with pytest.raises(GraphReleasedError):
        Engine.backward(e)


@pytest.mark.timeout(20)
def test_issue_case_cycle_by_tampering_raises_cycle_error_not_a_hang():
    x = leaf(1.0)
    y = ExpOp()(x)
    z = AddOp()(y, x)
    y.parents.append(z)  # z is now an ancestor of itself
    with pytest.raises(CycleError, match="cycle"):
        Engine.topo_sort(z)
    with pytest.raises(CycleError, match="cycle"):
        Engine.backward(z)


@pytest.mark.timeout(20)
def test_cycle_that_does_not_pass_through_the_root_is_found():
    x = leaf(1.0)
    y = ExpOp()(x)
    z = ExpOp()(y)
    y.parents.append(y)
    with pytest.raises(CycleError):
        Engine.topo_sort(z)


def test_second_backward_on_a_released_graph_raises():
    x = leaf(2.0)
    y = MulOp()(x, x)
    Engine.backward(y)
    with pytest.raises(GraphReleasedError, match="retain_graph=True"):
        Engine.backward(y)


def test_forward_recomputes_from_new_leaf_data():
    """A graph built once with placeholder leaves can be re-run with new values (the seed's two-layer perceptron)."""
    x = leaf([1.0, 2.0], "x")
    w = leaf([3.0, 4.0], "w")
    loss = SumOp()(MulOp()(x, w))
    assert loss.data == 11.0
    x.data = np.array([10.0, 20.0])
    assert Engine.forward(loss) is loss
    assert loss.data == 110.0
    Engine.backward(loss)
    np.testing.assert_array_equal(w.grad, [10.0, 20.0])
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])


def test_forward_on_a_released_graph_raises():
    x = leaf(2.0)
    y = ExpOp()(x)
    Engine.backward(y)
    with pytest.raises(GraphReleasedError):
        Engine.forward(y)


def test_sort_backward_order_backward_and_forward_use_no_recursion():
    """With the recursion limit a few frames above the current depth, a chain 3,000 nodes deep is sorted, walked
    backward and recomputed: any recursion over the chain would need 3,000 frames. (The time a 100,000-node chain
    takes, linear in the node count, is measured by benchmarks/bench_engine.py.)"""
    n = 3000
    x = leaf(1.0)
    one = leaf(1.0)
    h = x
    for _ in range(n):
        h = MulOp()(h, one)
    with recursion_limit(stack_depth() + 50):
        order = Engine.topo_sort(h)
        assert Engine.backward_order(h)[0] is h
        Engine.forward(h)
        Engine.backward(h)
    assert len(order) == n + 2 and order[-1] is h
    assert x.grad == 1.0 and one.grad == float(n)


# -- topological sort ----------------------------------------------------------------------------------------------
def test_topo_sort_puts_leaves_first_root_last_each_node_once_and_parents_before_children():
    a, b = leaf(1.0, "a"), leaf(2.0, "b")
    c = MulOp()(a, b)
    d = AddOp()(c, a)
    e = MulOp()(d, c)
    f = AddOp()(e, e)
    order = Engine.topo_sort(f)
    assert order[-1] is f
    assert len(order) == len({id(v) for v in order}) == 6
    position = {id(v): i for i, v in enumerate(order)}
    for node in order:
        for parent in node.parents:
            assert position[id(parent)] < position[id(node)]
    assert {id(order[0]), id(order[1])} == {id(a), id(b)}


def test_topo_sort_is_deterministic():
    a, b = leaf(1.0), leaf(2.0)
    root = AddOp()(MulOp()(a, b), MulOp()(b, a))
    first = [id(v) for v in Engine.topo_sort(root)]
    assert all([id(v) for v in Engine.topo_sort(root)] == first for _ in range(5))


def test_topo_sort_of_a_leaf_is_the_leaf():
    x = leaf(1.0)
    assert Engine.topo_sort(x) == [x]


# -- backward ---------------------------------------------------------------------------------------------------------
def test_a_variable_used_twice_receives_the_sum_of_both_paths():
    x = leaf(3.0)
    Engine.backward(MulOp()(x, x))
    assert x.grad == 6.0


def test_diamond_graph_accumulates():
    """y = exp(x); z = y + y·x: dz/dx = e^x + e^x·x + e^x = e^x (2 + x)."""
    x = leaf(0.5)
    y = ExpOp()(x)
    z = AddOp()(y, MulOp()(y, x))
    Engine.backward(z)
    assert x.grad == pytest.approx(np.exp(0.5) * 2.5, rel=1e-14)


def test_leaves_keep_gradients_internal_nodes_are_freed_and_the_graph_is_released():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    c = MulOp()(a, b)
    loss = SumOp()(c)
    Engine.backward(loss)
    assert c.grad is None and loss.grad is None
    # A released node keeps its op (so it is still not a leaf), whose saved values are dropped.
    assert c.op is not None and not c.is_leaf and c.parents == [] and c.is_released and loss.is_released
    assert c.op.inputs == () and not hasattr(c.op, "output")
    assert "released" in repr(c)
    with pytest.raises(GraphReleasedError, match="released"):
        Engine.backward(loss)
    np.testing.assert_array_equal(a.grad, [3.0, 4.0])


def test_a_released_op_drops_what_it_declares_as_saved_and_keeps_its_configuration():
    """Operator.release drops inputs, output and the attributes named in the class's ``saved`` declaration, and
    keeps the rest: the configuration and the flags (so a released op still refuses a second call)."""
    from autograd_lab import Operator, OperatorReuseError

    class Saving(Operator):
        saved = ("_pair", "_mask")

        def __init__(self, scale: float) -> None:
            self.scale = scale

        def forward(self, x):
            self._pair = (x * 2, x * 3)
            self._mask = x > 0
            return x * self.scale

        def backward(self, gy):
            return [gy * self.scale]

    x = leaf([1.0, -2.0])
    op = Saving(0.5)
    y = op(x)
    Engine.backward(SumOp()(y))
    state = vars(op)
    assert "_pair" not in state and "_mask" not in state and "output" not in state and op.inputs == ()
    assert op.config() == {"scale": 0.5}
    with pytest.raises(OperatorReuseError):
        op(x)
    np.testing.assert_array_equal(x.grad, [0.5, 0.5])


def test_retain_graph_keeps_op_and_parents():
    a = leaf(2.0)
    y = ExpOp()(a)
    Engine.backward(y, retain_graph=True)
    assert y.op is not None and y.parents == [a] and not y.is_released


def test_leaf_gradients_are_private_writable_arrays():
    """AddOp passes the same gradient array to both inputs; each leaf must still get its own buffer."""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    Engine.backward(AddOp()(a, b), grad=np.array([1.0, 1.0]))
    assert a.grad is not b.grad and a.grad.flags.writeable and b.grad.flags.writeable
    a.grad += 1.0
    np.testing.assert_array_equal(b.grad, [1.0, 1.0])


def test_the_seed_grad_array_of_the_caller_is_not_aliased():
    a = leaf([1.0, 2.0])
    seed = np.array([5.0, 6.0])
    Engine.backward(ExpOp()(a), grad=seed)
    a.grad *= 0
    np.testing.assert_array_equal(seed, [5.0, 6.0])


def test_gradients_accumulate_across_separate_graphs():
    w = Parameter(np.array([2.0]))
    Engine.backward(MulOp()(w, leaf([3.0])))
    Engine.backward(MulOp()(w, leaf([4.0])))
    np.testing.assert_array_equal(w.grad, [7.0])


def test_backward_of_a_vector_root_needs_grad():
    y = ExpOp()(leaf([1.0, 2.0]))
    with pytest.raises(ShapeError, match=r"grad="):
        Engine.backward(y)


def test_backward_grad_of_the_wrong_shape_raises():
    y = ExpOp()(leaf([1.0, 2.0]))
    with pytest.raises(ShapeError, match=r"grad has shape \(3,\), but the root has shape \(2,\)"):
        Engine.backward(y, grad=np.ones(3))


def test_backward_with_inputs_computes_only_those_gradients():
    x = leaf([1.0, 2.0], "x")
    w = Parameter(np.array([3.0, 4.0]), name="w")
    loss = SumOp()(MulOp()(x, w))
    Engine.backward(loss, inputs=[w])
    np.testing.assert_array_equal(w.grad, [1.0, 2.0])
    assert x.grad is None


def test_backward_of_a_leaf_seeds_it_with_one():
    x = leaf(4.0)
    Engine.backward(x)
    assert x.grad == 1.0


def test_float32_graph_keeps_float32_gradients():
    x = Variable.from_numpy(np.array([1.0, 2.0], dtype=np.float32))
    w = Variable.from_numpy(np.array([3.0, 4.0], dtype=np.float32))
    loss = SumOp()(MulOp()(x, w))
    Engine.backward(loss)
    assert loss.dtype == np.float32 and x.grad.dtype == np.float32 and w.grad.dtype == np.float32


# -- cases found by the adversarial review, each with its right value ------------------------------------------------
def test_forward_rerun_bumps_versions_so_a_second_loss_cannot_mix_old_and_new_values():
    """l2 = Σ (x·x)² shares h = x·x with l1; re-running l1 after x changes must not feed l2 half-new values."""
    from autograd_lab import InPlaceModificationError

    x = Variable.from_numpy([1.0, 2.0])
    h = MulOp()(x, x)
    l1 = SumOp()(h)
    l2 = SumOp()(MulOp()(h, h))
    x.data = np.array([3.0, 4.0])
    Engine.forward(l1)
    with pytest.raises(InPlaceModificationError, match="MulOp input 0"):
        Engine.backward(l2)


def test_a_backward_that_fails_part_way_changes_no_gradient_and_a_retry_is_exact():
    """Found in review: partial sums survived a failed pass and a retained retry counted them twice."""
    from autograd_lab import AnomalyError, Operator, detect_anomaly

    class NaNGradientOp(Operator):
        """Identity forward, NaN gradient: a backward that fails under detect_anomaly()."""

        def forward(self, a):
            return a.copy()

        def backward(self, gy):
            return [np.full_like(gy, np.nan)]

    x = Variable.from_numpy([0.0, 1.0])
    w = Variable.from_numpy([2.0, 3.0])
    w.grad = np.array([100.0, 100.0])
    loss = SumOp()(AddOp()(MulOp()(ExpOp()(w), x), NaNGradientOp()(x)))
    with pytest.raises(AnomalyError), detect_anomaly():
        Engine.backward(loss, retain_graph=True)
    np.testing.assert_array_equal(w.grad, [100.0, 100.0])
    assert x.grad is None
    w.grad = None
    Engine.backward(loss, retain_graph=True)
    np.testing.assert_allclose(w.grad, np.exp([2.0, 3.0]) * [0.0, 1.0])  # d/dw Σ exp(w)·x = exp(w)·x


def test_backward_with_inputs_gives_gradients_to_those_leaves_only():
    """Found in review: AddOp returns both gradients regardless, and the unwanted leaf's .grad piled up."""
    b = Parameter(np.zeros(3))
    x = Variable.from_numpy(np.zeros(3))
    loss = SumOp()(AddOp()(x, b))
    for _ in range(3):
        Engine.forward(loss)
        b.grad = None
        Engine.backward(loss, retain_graph=True, inputs=[b])
    assert x.grad is None
    np.testing.assert_array_equal(b.grad, [1.0, 1.0, 1.0])


def test_cycle_error_names_a_node_on_the_cycle_not_one_downstream_of_it():
    a = leaf(1.0, "a")
    b = MulOp()(a, a)
    b.name = "b"
    c = ExpOp()(b)
    c.name = "c"
    root = SumOp()(c)
    b.parents.append(c)  # tampering: c depends on b and now b on c
    with pytest.raises(CycleError, match=r"cycle of 2 node\(s\) through Variable\('[bc]'"):
        Engine.backward(root)


def test_backward_inputs_must_be_leaves_and_a_leaf_root_outside_them_gets_nothing():
    """Found in review: an internal node in inputs= was silently ignored; a leaf root got a gradient anyway."""
    a, b = leaf([1.0, 2.0], "a"), leaf([3.0, 4.0], "b")
    h = MulOp()(a, b)
    y = SumOp()(MulOp()(h, h))
    with pytest.raises(ValueError, match="leaves only"):
        Engine.backward(y, inputs=[a, h], retain_graph=True)
    Engine.backward(a, grad=np.ones(2), inputs=[b])
    assert a.grad is None and b.grad is None


def test_a_bad_existing_leaf_grad_is_refused_before_any_leaf_changes():
    """All-or-nothing when storing too: a hand-set .grad of the wrong shape must not leave another leaf updated."""
    a, b = leaf([1.0, 2.0], "a"), leaf([3.0, 4.0], "b")
    a.grad = np.zeros(2)
    b.grad = np.zeros(3)
    with pytest.raises(ShapeError, match=r"already has a \.grad"):
        Engine.backward(SumOp()(MulOp()(a, b)))
    np.testing.assert_array_equal(a.grad, [0.0, 0.0])


# -- cases found by the second review (the faster engine), each with its right value ---------------------------------
def test_a_modified_input_is_reported_before_any_other_fault_of_the_backward():
    """Found in review: with the version check after backward, a NaN gradient or a bad return hid the real cause."""
    from autograd_lab import InPlaceModificationError, Operator, detect_anomaly
    from autograd_lab.ops import DivOp

    a, b = Parameter(np.array([1.0, 1.0])), Parameter(np.array([0.0, 1.0]))
    with np.errstate(all="ignore"):
        y = SumOp()(DivOp()(a, b))  # d/da = 1/b is inf at b = 0: an anomaly, but b changed first
    b.add_(np.ones(2))
    with np.errstate(all="ignore"), detect_anomaly(), pytest.raises(InPlaceModificationError, match="DivOp input 1"):
        Engine.backward(y)

    calls = []

    class BrokenOp(Operator):
        """Identity forward; a backward that returns too few gradients and records that it ran."""

        def forward(self, x, w):
            return x + w

        def backward(self, gy):
            calls.append(1)
            return [gy]

    x, w = leaf([1.0]), Parameter(np.array([2.0]))
    z = BrokenOp()(x, w)
    w.add_(np.ones(1))
    with pytest.raises(InPlaceModificationError, match="BrokenOp input 1"):
        Engine.backward(z)
    assert calls == []  # refused before the op's backward ran


def test_a_leaf_root_gets_a_private_gradient_not_a_view():
    x = Variable.from_numpy(np.array([[3.0]]))
    Engine.backward(x)
    assert x.grad.base is None and x.grad.flags.writeable and x.grad.shape == (1, 1) and x.grad[0, 0] == 1.0


def test_an_operator_may_keep_its_own_attribute_named_saved():
    # `saved` is the class's declaration of what forward keeps; a learner's op that stores a tuple of arrays under
    # that name on the instance must still run backward, release and print (release and config read the class).
    from autograd_lab import Operator

    class Scale(Operator):
        def forward(self, x):
            self.saved = (np.array(2.0), x.shape)
            return x * 2.0

        def backward(self, gy):
            return [gy * self.saved[0]]

    x = leaf([1.0, 2.0])
    y = Scale()(x)
    repr(y.op)  # config() must not raise
    Engine.backward(SumOp()(y))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
