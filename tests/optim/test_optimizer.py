"""What every optimizer promises: Parameters only, zero_grad touches only its own, in-place versioned updates."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, InPlaceModificationError, Parameter, Variable
from autograd_lab.ops import MulOp, SumOp
from autograd_lab.optim import SGD, Adam

OPTIMIZERS = [lambda ps: SGD(ps, lr=0.1), lambda ps: SGD(ps, lr=0.1, momentum=0.9), lambda ps: Adam(ps, lr=0.1)]


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_a_plain_variable_is_refused_with_its_index(make):
    with pytest.raises(TypeError, match=r"params\[1\] is a Variable, not a Parameter"):
        make([Parameter(np.zeros(2)), Variable.from_numpy(np.zeros(2))])


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_one_parameter_instead_of_a_list_is_refused(make):
    with pytest.raises(TypeError, match="not one"):
        make(Parameter(np.zeros(2)))


def test_empty_and_duplicated_parameter_lists_are_refused():
    p = Parameter(np.zeros(2))
    with pytest.raises(ValueError, match="empty"):
        SGD([], lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        SGD([p, p], lr=0.1)


def test_zero_grad_clears_its_parameters_only():
    mine, other = Parameter(np.ones(2)), Parameter(np.ones(2))
    data = Variable.from_numpy(np.ones(2))
    for v in (mine, other, data):
        v.grad = np.ones(2)
    SGD([mine], lr=0.1).zero_grad()
    assert mine.grad is None
    np.testing.assert_array_equal(other.grad, [1, 1])
    np.testing.assert_array_equal(data.grad, [1, 1])


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_step_updates_in_place_through_add_and_skips_parameters_without_gradient(make):
    p, idle = Parameter(np.ones(3)), Parameter(np.ones(3))
    address, version = p.data.ctypes.data, p._version  # an address, not a reference (add_ is copy-on-write)
    p.grad = np.full(3, 0.5)
    make([p, idle]).step()
    assert p.data.ctypes.data == address  # the same buffer, never a new .data
    assert p._version == version + 1
    assert not p.data.flags.writeable
    assert np.all(p.data < 1)
    np.testing.assert_array_equal(idle.data, np.ones(3))


def test_a_graph_built_before_the_step_refuses_backward_after_it():
    w = Parameter(np.ones(2))
    loss = SumOp()(MulOp()(w, w))
    Engine.backward(loss, retain_graph=True)
    SGD([w], lr=0.1).step()
    with pytest.raises(InPlaceModificationError, match="modified after the graph was built"):
        Engine.backward(loss)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda ps: SGD(ps, lr=-1), "lr must be in"),
        (lambda ps: SGD(ps, lr=0.1, momentum=1.0), "momentum must be in"),
        (lambda ps: SGD(ps, lr=0.1, nesterov=True), "nesterov=True needs momentum"),
        (lambda ps: SGD(ps, lr=0.1, weight_decay=-0.1), "weight_decay must be in"),
        (lambda ps: SGD(ps, lr=0.1, clip_per_param=0), "clip_per_param must be positive"),
        (lambda ps: Adam(ps, betas=(0.9, 1.0)), "beta2 must be in"),
        (lambda ps: Adam(ps, eps=0), "eps must be positive"),
        (lambda ps: Adam(ps, lr=float("nan")), "lr must be in"),
    ],
)
def test_out_of_range_hyper_parameters_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make([Parameter(np.zeros(2))])
