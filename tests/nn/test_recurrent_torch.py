"""RNN and LSTM against PyTorch's nn.RNN / nn.LSTM (an independent implementation) with the same float64 weights."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Variable
from autograd_lab.nn import LSTM, RNN, LSTMCell
from autograd_lab.ops import AddOp, MulOp, SumOp

torch = pytest.importorskip("torch", reason="PyTorch is an optional extra (pip install -e '.[torch]')")

N, T, D, H = 4, 28, 28, 16


def _ours_and_theirs(cls, torch_cls, seed: int):
    ours = cls(D, H, rng=seed, dtype=np.float64)
    theirs = torch_cls(D, H, batch_first=True).double()
    # Our names are PyTorch's single-layer names without the "_l0" suffix.
    theirs.load_state_dict({f"{k}_l0": torch.from_numpy(v) for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize(("cls", "torch_cls"), [(LSTM, "LSTM"), (RNN, "RNN")])
def test_outputs_and_all_gradients_match_pytorch_over_28_steps(cls, torch_cls):
    rng = np.random.default_rng(12)
    ours, theirs = _ours_and_theirs(cls, getattr(torch.nn, torch_cls), seed=3)
    x = rng.standard_normal((N, T, D))
    h0 = rng.standard_normal((N, H)) * 0.5
    c0 = rng.standard_normal((N, H)) * 0.5
    upstream = rng.standard_normal((N, T, H))

    xv, hv, cv = (Variable.from_numpy(a) for a in (x, h0, c0))
    outputs, _ = ours(xv, (hv, cv) if cls is LSTM else hv)
    Engine.backward(SumOp()(MulOp()(outputs, Variable.from_numpy(upstream))))

    xt = torch.tensor(x, requires_grad=True)
    ht = torch.tensor(h0[None], requires_grad=True)
    ct = torch.tensor(c0[None], requires_grad=True)
    out_t, _ = theirs(xt, (ht, ct) if cls is LSTM else ht)
    (out_t * torch.from_numpy(upstream)).sum().backward()

    assert np.abs(outputs.data - out_t.detach().numpy()).max() <= 1e-10
    pairs = [(xv.grad, xt.grad), (hv.grad, ht.grad[0])] + ([(cv.grad, ct.grad[0])] if cls is LSTM else [])
    pairs += [(p.grad, dict(theirs.named_parameters())[f"{name}_l0"].grad) for name, p in ours.named_parameters()]
    worst = max(np.abs(a - b.numpy()).max() for a, b in pairs)
    assert worst <= 1e-6, f"largest absolute gradient difference {worst:.3g}"


def test_state_dict_loads_from_pytorch_and_back():
    theirs = torch.nn.LSTMCell(D, H).double()
    ours = LSTMCell(D, H, rng=0, dtype=np.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert all(p.dtype == np.float64 for p in ours.parameters())
    back = torch.nn.LSTMCell(D, H).double()
    back.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((N, D)))
    h_ours, c_ours = ours(Variable.from_numpy(x.numpy()))
    h_back, c_back = back(x)
    np.testing.assert_allclose(h_ours.data, h_back.detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(c_ours.data, c_back.detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("cls", "torch_cls"), [(LSTM, "LSTM"), (RNN, "RNN")])
def test_the_zero_initial_state_and_final_state_match_pytorch_over_28_steps(cls, torch_cls):
    """No initial state given: the LSTM leaves out the products with h_0 = c_0 = 0 (lstm_step), so this path is
    checked on its own; ``final_state`` (no stack of the outputs) gives the final state and its gradients."""
    rng = np.random.default_rng(13)
    ours, theirs = _ours_and_theirs(cls, getattr(torch.nn, torch_cls), seed=4)
    x = rng.standard_normal((N, T, D))
    up_h, up_c = rng.standard_normal((N, H)), rng.standard_normal((N, H))

    xv = Variable.from_numpy(x)
    state = ours.final_state(xv)
    h, c = state if cls is LSTM else (state, None)
    loss = SumOp()(MulOp()(h, Variable.from_numpy(up_h)))
    if c is not None:
        loss = AddOp()(loss, SumOp()(MulOp()(c, Variable.from_numpy(up_c))))
    Engine.backward(loss)

    xt = torch.tensor(x, requires_grad=True)
    _, state_t = theirs(xt)
    h_t, c_t = state_t if cls is LSTM else (state_t, None)
    loss_t = (h_t[0] * torch.from_numpy(up_h)).sum()
    if c_t is not None:
        loss_t = loss_t + (c_t[0] * torch.from_numpy(up_c)).sum()
    loss_t.backward()

    assert np.abs(h.data - h_t[0].detach().numpy()).max() <= 1e-10
    if c is not None:
        assert np.abs(c.data - c_t[0].detach().numpy()).max() <= 1e-10
    pairs = [(xv.grad, xt.grad)]
    pairs += [(p.grad, dict(theirs.named_parameters())[f"{name}_l0"].grad) for name, p in ours.named_parameters()]
    worst = max(np.abs(a - b.numpy()).max() for a, b in pairs)
    assert worst <= 1e-6, f"largest absolute gradient difference {worst:.3g}"
    # The module's own call gives the same final state, and its outputs end with it.
    outputs, again = ours(Variable.from_numpy(x))
    np.testing.assert_array_equal((again[0] if cls is LSTM else again).data, h.data)
    np.testing.assert_array_equal(outputs.data[:, -1], h.data)
