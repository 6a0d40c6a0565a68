"""RNN and LSTM (issue 12): gradients against central differences and PyTorch, BPTT depth, state dicts, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, gradcheck
from autograd_lab.nn import LSTM, RNN, LSTMCell, RNNCell
from autograd_lab.nn.recurrent import lstm_cell, rnn_cell
from autograd_lab.ops import MulOp, SumOp
from autograd_lab.optim import SGD

N, D, H = 3, 4, 5


def _sequence(T: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, T, D))


def _weighted_sum(y: Variable, seed: int = 1) -> Variable:
    """A scalar that depends on every element of y with a different weight, so no gradient can hide."""
    w = np.random.default_rng(seed).standard_normal(y.shape)
    return SumOp()(MulOp()(y, Variable.from_numpy(w)))


# -- the cells against central differences (float64, T = 3) ---------------------------------------------------------
@pytest.mark.parametrize("cls", [RNNCell, LSTMCell])
def test_a_cell_unrolled_for_three_steps_passes_gradcheck_in_float64(cls):
    cell = cls(D, H, rng=0, dtype=np.float64)
    params = [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
    x = _sequence(3)
    h0 = np.random.default_rng(2).standard_normal((N, H))

    def unrolled(xs, h, w_ih, w_hh, b_ih, b_hh):
        c = h
        for t in range(3):
            x_t = Variable.from_numpy(xs.data[:, t])  # the steps' inputs are data; xs's own gradient is SelectOp's test
            if cls is RNNCell:
                h = rnn_cell(x_t, h, w_ih, w_hh, b_ih, b_hh)
            else:
                h, c = lstm_cell(x_t, h, c, w_ih, w_hh, b_ih, b_hh)
        return _weighted_sum(h) if cls is RNNCell else SumOp()(MulOp()(h, c))

    gradcheck(unrolled, [x, h0, *(p.data for p in params)], wrt=[1, 2, 3, 4, 5])


@pytest.mark.parametrize("cls", [RNN, LSTM])
def test_the_sequence_module_passes_gradcheck_for_inputs_and_initial_state(cls):
    module = cls(D, H, rng=1, dtype=np.float64)
    x = _sequence(3, seed=3)
    h0 = np.random.default_rng(4).standard_normal((N, H)) * 0.5
    c0 = np.random.default_rng(5).standard_normal((N, H)) * 0.5

    def run(xs, h, c):
        outputs, _ = module(xs, h if cls is RNN else (h, c))
        return _weighted_sum(outputs)

    gradcheck(run, [x, h0, c0], wrt=[0, 1] if cls is RNN else [0, 1, 2])


@pytest.mark.parametrize("cls", [RNN, LSTM])
def test_the_sequence_module_from_the_zero_state_passes_gradcheck(cls):
    """No initial state: the LSTM's first step leaves out the products with h_0 = c_0 = 0 (lstm_step)."""
    module = cls(D, H, rng=2, dtype=np.float64)

    def run(xs):
        state = module.final_state(xs)
        h, c = state if cls is LSTM else (state, state)
        return SumOp()(MulOp()(h, c))

    gradcheck(run, [_sequence(3, seed=6)])  # the parameters' gradients on this path: test_recurrent_torch.py


# -- depth: backpropagation through a long unrolled graph ------------------------------------------------------------
def test_a_thousand_step_sequence_trains_without_recursion_error():
    """The engine walks the 19,000-op graph iteratively (Kahn's algorithm): no Python recursion limit is hit."""
    lstm = LSTM(2, 4, rng=0)
    optimizer = SGD(lstm.parameters(), lr=0.1)
    x = Variable.from_numpy(np.random.default_rng(0).standard_normal((2, 1000, 2)).astype(np.float32))
    before = lstm.state_dict()
    _, (h, _) = lstm(x)
    optimizer.zero_grad()
    Engine.backward(SumOp()(h), inputs=lstm.parameters())
    for p in lstm.parameters():
        assert p.grad is not None and np.isfinite(p.grad).all(), p.name
    optimizer.step()
    assert all(not np.array_equal(before[name], p.data) for name, p in lstm.named_parameters())
    assert h.is_released and h.parents == [], "the unrolled graph is released after backward"


# -- state dicts ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("cls", "rows"), [(RNN, H), (LSTM, 4 * H), (RNNCell, H), (LSTMCell, 4 * H)])
def test_parameters_are_named_and_shaped_as_in_pytorch(cls, rows):
    shapes = {name: p.shape for name, p in cls(D, H, rng=0).named_parameters()}
    assert shapes == {"weight_ih": (rows, D), "weight_hh": (rows, H), "bias_ih": (rows,), "bias_hh": (rows,)}


def test_load_state_dict_keeps_float64_and_round_trips():
    source = LSTM(D, H, rng=0, dtype=np.float64)
    target = LSTM(D, H, rng=1, dtype=np.float64)
    target.load_state_dict(source.state_dict())
    for name, value in target.state_dict().items():
        assert value.dtype == np.float64, name
        np.testing.assert_array_equal(value, source.state_dict()[name])


def test_initial_weights_follow_pytorch_uniform_bound():
    lstm = LSTM(D, 16, rng=0)
    for p in lstm.parameters():
        assert np.abs(p.data).max() <= 1 / np.sqrt(16), p.name


# -- bad input --------------------------------------------------------------------------------------------------------
def test_a_sequence_of_length_zero_is_refused_naming_module_shape_and_line():
    with pytest.raises(ShapeError, match=r"LSTM\(4, 5\).*length 0.*\(3, 0, 4\).*test_recurrent\.py:\d+"):
        LSTM(D, H)(Variable.from_numpy(np.zeros((N, 0, D), np.float32)))


@pytest.mark.parametrize("cls", [RNN, LSTM])
def test_a_wrong_feature_size_is_refused_naming_both_sizes(cls):
    with pytest.raises(ShapeError, match=rf"{cls.__name__}\(4, 5\).*expected 4 input features.*got 7.*test_recurrent"):
        cls(D, H)(Variable.from_numpy(np.zeros((N, 2, 7), np.float32)))


def test_a_two_dimensional_input_to_a_sequence_module_is_refused():
    with pytest.raises(ShapeError, match=r"RNN\(4, 5\).*\(N, T, input_size\).*\(3, 4\)"):
        RNN(D, H)(Variable.from_numpy(np.zeros((N, D), np.float32)))


@pytest.mark.parametrize("state", ["h", "c"])
def test_an_initial_state_of_the_wrong_shape_is_refused(state):
    x = Variable.from_numpy(np.zeros((N, 2, D), np.float32))
    good = Variable.from_numpy(np.zeros((N, H), np.float32))
    bad = Variable.from_numpy(np.zeros((N + 1, H), np.float32))
    given = (bad, good) if state == "h" else (good, bad)
    with pytest.raises(ShapeError, match=rf"LSTM\(4, 5\).*initial {state} has shape \(4, 5\), expected \(3, 5\)"
                                         r".*test_recurrent\.py"):
        LSTM(D, H)(x, given)


def test_an_lstm_state_that_is_not_a_pair_is_a_type_error():
    x = Variable.from_numpy(np.zeros((N, 2, D), np.float32))
    with pytest.raises(TypeError, match=r"tuple \(h, c\)"):
        LSTM(D, H)(x, Variable.from_numpy(np.zeros((N, H), np.float32)))


def test_a_cell_refuses_a_sequence():
    with pytest.raises(ShapeError, match=r"LSTMCell\(4, 5\).*\(N, input_size\)"):
        LSTMCell(D, H)(Variable.from_numpy(np.zeros((N, 2, D), np.float32)))


def test_float32_stays_float32_through_the_unrolled_graph():
    outputs, (h, c) = LSTM(D, H, rng=0)(Variable.from_numpy(_sequence(2).astype(np.float32)))
    assert outputs.shape == (N, 2, H) and outputs.dtype == h.dtype == c.dtype == np.float32
    np.testing.assert_array_equal(outputs.data[:, -1], h.data)


def test_the_unrolled_graph_is_freed_after_backward():
    """A caller that keeps the loss (to log it) does not keep the 28-step graph: backward released it."""
    import weakref

    lstm = LSTM(D, H, rng=0)
    x = Variable.from_numpy(np.random.default_rng(0).standard_normal((N, 28, D)).astype(np.float32))
    outputs, (h, c) = lstm(x)
    states = [weakref.ref(v) for v in (h, c, *h.parents)]
    loss = SumOp()(h)
    Engine.backward(loss, inputs=lstm.parameters())
    del outputs, h, c
    assert loss.is_released and loss.parents == []
    assert all(ref() is None for ref in states), "a state of the unrolled graph is still alive after backward"
