"""Cases ported from needle, CMU 10-414/714 homework 4 (``dlsys10714/hw4``): ``tests/test_sequence_models.py``
(``test_rnn_cell``, ``test_lstm_cell``, ``test_rnn``, ``test_lstm``) and ``tests/test_conv.py``
(``test_nn_conv_forward``, ``test_nn_conv_backward``).

needle's recurrent tests run every combination of its parameter lists; the cases here keep the larger sizes
(batch 15, input 11, hidden 12) and every combination of the options (bias, initial state, nonlinearity,
num_layers), with needle's two sequence lengths: 13 steps from a given initial state, 1 step from zeros (which keeps
the suite fast). needle compares against ``torch.nn`` modules; so do these, by calling the module with our parameter
values (``torch.func.functional_call``) so that every parameter's gradient is compared, not only ``weight_ih``'s.
Inputs are drawn from [-0.3, 0.3), about PyTorch's initial range for H = 12 (1/√12), so that a 13-step ReLU RNN
stays finite.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch

from autograd_lab import Variable
from autograd_lab import ops as O
from autograd_lab.nn import LSTM, RNN, LSTMCell, RNNCell

from .harness import Case

F = torch.nn.functional
CASES: list[Case] = []
BATCH, INPUT, HIDDEN = 15, 11, 12


def names(layers: int, bias: bool, torch_style: bool) -> list[str]:
    """Parameter names per layer, as PyTorch (``weight_ih_l0``) or this library (``weight_ih``, ``weight_ih_l1``)."""
    out = []
    for k in range(layers):
        suffix = f"_l{k}" if torch_style or k else ""
        out += [f"weight_ih{suffix}", f"weight_hh{suffix}"] + ([f"bias_ih{suffix}", f"bias_hh{suffix}"] if bias else [])
    return out


def shapes(gates: int, layers: int, bias: bool) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for k in range(layers):
        out += [(gates * HIDDEN, INPUT if k == 0 else HIDDEN), (gates * HIDDEN, HIDDEN)]
        out += [(gates * HIDDEN,)] * 2 if bias else []
    return out


def recurrent(kind: str, layers: int, bias: bool, init: bool, nonlinearity: str) -> tuple[Any, Any, list[Any]]:
    """ours, theirs and input shapes for one configuration; inputs are x, the initial state(s), the parameters."""
    lstm = kind in ("lstm", "lstm_cell")
    cell = kind.endswith("cell")
    state_shape = (BATCH, HIDDEN) if cell or layers == 1 else (layers, BATCH, HIDDEN)
    n_state = (2 if lstm else 1) if init else 0
    x_shape = (BATCH, INPUT) if cell else (BATCH, 13 if init else 1, INPUT)
    options: dict[str, Any] = {"bias": bias}
    if not lstm:
        options["nonlinearity"] = nonlinearity
    if not cell:
        options["num_layers"] = layers

    def ours(x: Variable, *rest: Variable) -> Variable:
        module_class = {"rnn": RNN, "lstm": LSTM, "rnn_cell": RNNCell, "lstm_cell": LSTMCell}[kind]
        module = module_class(INPUT, HIDDEN, dtype=x.dtype, **options)
        for name, value in zip(names(layers, bias, False), rest[n_state:]):
            setattr(module, name, value)
        state = (tuple(rest[:2]) if lstm else rest[0]) if init else None
        out = module(x, state)
        if cell:
            return out[0] if lstm else out
        return out[0]

    def theirs(x: Any, *rest: Any) -> Any:
        module_class = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "rnn_cell": torch.nn.RNNCell,
                        "lstm_cell": torch.nn.LSTMCell}[kind]
        torch_options = dict(options)
        if cell:
            module = module_class(INPUT, HIDDEN, **torch_options)
            parameters = dict(zip(names(1, bias, False), rest[n_state:]))
        else:
            module = module_class(INPUT, HIDDEN, batch_first=True, **torch_options)
            parameters = dict(zip(names(layers, bias, True), rest[n_state:]))
        state: Any = None
        if init:
            # PyTorch's sequence modules take (num_layers, N, H) states even for one layer
            lift = (lambda s: s) if cell or layers > 1 else (lambda s: s.unsqueeze(0))
            state = tuple(lift(s) for s in rest[:2]) if lstm else lift(rest[0])
        out = torch.func.functional_call(module.to(x.dtype), parameters, (x, state))
        if cell:
            return out[0] if lstm else out
        return out[0]

    return ours, theirs, [x_shape] + [state_shape] * n_state + shapes(4 if lstm else 1, layers, bias)


for bias, init, nonlinearity in itertools.product([True, False], [True, False], ["tanh", "relu"]):
    ours, theirs, inputs = recurrent("rnn_cell", 1, bias, init, nonlinearity)
    CASES.append(Case("needle", f"test_rnn_cell[bias={bias}, init_hidden={init}, {nonlinearity}]", ours, theirs,
                      inputs, low=-0.3, high=0.3))
    for layers in (1, 2):
        ours, theirs, inputs = recurrent("rnn", layers, bias, init, nonlinearity)
        CASES.append(Case("needle", f"test_rnn[num_layers={layers}, bias={bias}, init_hidden={init}, {nonlinearity}]",
                          ours, theirs, inputs, low=-0.3, high=0.3))
for bias, init in itertools.product([True, False], [True, False]):
    ours, theirs, inputs = recurrent("lstm_cell", 1, bias, init, "tanh")
    CASES.append(Case("needle", f"test_lstm_cell[bias={bias}, init_hidden={init}]", ours, theirs, inputs,
                      low=-0.3, high=0.3))
    for layers in (1, 2):
        ours, theirs, inputs = recurrent("lstm", layers, bias, init, "tanh")
        CASES.append(Case("needle", f"test_lstm[num_layers={layers}, bias={bias}, init_hidden={init}]", ours, theirs,
                          inputs, low=-0.3, high=0.3))

# test_conv.py: needle's Conv pads k // 2 ('same' for odd k); its inputs are (10, cin, s, s), drawn from [0, 1).
for test, params in [("test_nn_conv_forward", [(4, 8, 16, 3, 1), (32, 8, 16, 3, 2), (32, 8, 8, 3, 2),
                                               (32, 16, 8, 3, 1), (32, 16, 8, 3, 2)]),
                     ("test_nn_conv_backward", [(4, 1, 1, 3, 1), (14, 8, 16, 3, 1), (14, 8, 16, 3, 2),
                                                (14, 8, 8, 3, 1), (14, 8, 8, 3, 2), (14, 16, 8, 3, 1),
                                                (14, 16, 8, 3, 2)])]:
    for s, cin, cout, k, stride in params:
        CASES.append(Case("needle", f"{test}[{s}, {cin}, {cout}, {k}, {stride}]",
                          lambda x, w, stride=stride, k=k: O.Conv2DOp(stride, k // 2)(x, w),
                          lambda x, w, stride=stride, k=k: F.conv2d(x, w, stride=stride, padding=k // 2),
                          [(10, cin, s, s), (cout, cin, k, k)], low=0.0, high=1.0))
