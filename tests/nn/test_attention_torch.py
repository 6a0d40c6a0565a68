"""Attention, the encoder layer, GELU and Embedding against PyTorch in float64: forward values and every gradient.

Each case copies our parameters into the PyTorch module (the layouts are the same by name), runs both on the same
inputs, seeds both backward passes with the same random upstream gradient, and compares to 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Parameter, Variable
from autograd_lab.errors import ShapeError
from autograd_lab.nn import Embedding, MultiheadAttention, TransformerEncoderLayer, causal_mask
from autograd_lab.ops import EmbeddingOp, GELUOp

torch = pytest.importorskip("torch")
TOL = dict(rtol=1e-6, atol=1e-9)


def _t(a: np.ndarray, grad: bool = True):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def _copy_mha(ours: MultiheadAttention, theirs) -> None:
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.tensor(ours.in_proj_weight.data))
        theirs.in_proj_bias.copy_(torch.tensor(ours.in_proj_bias.data))
        theirs.out_proj.weight.copy_(torch.tensor(ours.out_proj.weight.data))
        theirs.out_proj.bias.copy_(torch.tensor(ours.out_proj.bias.data))


def _randomize(module, rng: np.random.Generator, scale: float, only: tuple[str, ...] | None = None) -> None:
    """Replace parameters (all, or those named in ``only``) by new ones drawn from N(0, scale²)."""
    for name, p in list(module.named_parameters()):
        if only is not None and name not in only:
            continue
        *path, attr = name.split(".")
        owner = module
        for part in path:
            owner = owner[int(part)] if isinstance(owner, list) else getattr(owner, part)
        setattr(owner, attr, Parameter(rng.normal(size=p.shape) * scale, name=attr))


def _grads(module) -> dict[str, np.ndarray]:
    return {name: p.grad.numpy() for name, p in module.named_parameters()}


CASES = [  # embed_dim, heads, Tq, Tk, N, batch_first, mask, self-attention
    (8, 1, 5, 5, 2, False, None, True),
    (8, 2, 4, 4, 3, True, "causal", True),
    (12, 3, 6, 6, 2, True, "padding", True),
    (12, 4, 3, 5, 2, False, "float", False),
    (16, 4, 7, 7, 1, True, "both", True),
    (6, 2, 1, 4, 2, True, None, False),
]


@pytest.mark.parametrize("e,h,tq,tk,n,batch_first,mask,self_attention", CASES)
def test_multihead_attention_matches_torch(e, h, tq, tk, n, batch_first, mask, self_attention):
    rng = np.random.default_rng(e * 100 + h * 10 + tq)
    ours = MultiheadAttention(e, h, batch_first=batch_first, rng=rng, dtype=np.float64)
    theirs = torch.nn.MultiheadAttention(e, h, batch_first=batch_first, dtype=torch.float64)
    _randomize(ours, rng, scale=1.0, only=("in_proj_bias", "out_proj.bias"))  # biases start at 0: make them count
    _copy_mha(ours, theirs)

    shape_q = (n, tq, e) if batch_first else (tq, n, e)
    shape_k = (n, tk, e) if batch_first else (tk, n, e)
    q = rng.normal(size=shape_q)
    k = q if self_attention else rng.normal(size=shape_k)
    v = q if self_attention else rng.normal(size=shape_k)
    attn_mask = padding = None
    if mask in ("causal", "both"):
        attn_mask = causal_mask(tq)
    if mask == "float":
        attn_mask = rng.normal(size=(tq, tk))
    if mask in ("padding", "both"):
        padding = np.zeros((n, tk), bool)
        padding[:, -1] = True  # the last key is padding for every example (no row is masked entirely)
    gy = rng.normal(size=shape_q)

    qv = Variable.from_numpy(q)
    kv = qv if self_attention else Variable.from_numpy(k)
    vv = qv if self_attention else Variable.from_numpy(v)
    out, weights = ours(qv, kv, vv, key_padding_mask=padding, attn_mask=attn_mask)
    Engine.backward(out, grad=gy)

    qt = _t(q)
    kt = qt if self_attention else _t(k)
    vt = qt if self_attention else _t(v)
    tout, tweights = theirs(qt, kt, vt, key_padding_mask=None if padding is None else torch.tensor(padding),
                            attn_mask=None if attn_mask is None else torch.tensor(attn_mask))
    tout.backward(torch.tensor(gy))

    np.testing.assert_allclose(out.data, tout.detach().numpy(), **TOL)
    np.testing.assert_allclose(weights, tweights.detach().numpy(), **TOL)
    np.testing.assert_allclose(qv.grad, qt.grad.numpy(), **TOL)
    if not self_attention:
        np.testing.assert_allclose(kv.grad, kt.grad.numpy(), **TOL)
        np.testing.assert_allclose(vv.grad, vt.grad.numpy(), **TOL)
    theirs_grads = _grads(theirs)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad, theirs_grads[name], **TOL, err_msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("masked", [False, True])
def test_encoder_layer_matches_torch(norm_first, activation, masked):
    e, h, ff, t, n = 8, 2, 16, 5, 3
    rng = np.random.default_rng(7)
    ours = TransformerEncoderLayer(e, h, ff, dropout=0.0, activation=activation, batch_first=True,
                                   norm_first=norm_first, rng=rng, dtype=np.float64)
    act = {"relu": torch.nn.functional.relu, "gelu": torch.nn.functional.gelu,
           "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}[activation]
    theirs = torch.nn.TransformerEncoderLayer(e, h, ff, dropout=0.0, activation=act, batch_first=True,
                                              norm_first=norm_first, dtype=torch.float64)
    names = {"norm1.gamma": "norm1.weight", "norm1.beta": "norm1.bias", "norm2.gamma": "norm2.weight",
             "norm2.beta": "norm2.bias"}
    _randomize(ours, rng, scale=0.3)  # random (not 1/0) norm parameters and biases: every parameter's role counts
    theirs_params = dict(theirs.named_parameters())
    with torch.no_grad():
        for name, p in ours.named_parameters():
            theirs_params[names.get(name, name)].copy_(torch.tensor(p.data))
    x = rng.normal(size=(n, t, e))
    mask = causal_mask(t) if masked else None
    gy = rng.normal(size=x.shape)
    xv = Variable.from_numpy(x)
    out = ours(xv, src_mask=mask)
    Engine.backward(out, grad=gy)
    xt = _t(x)
    tout = theirs(xt, src_mask=None if mask is None else torch.tensor(mask))
    tout.backward(torch.tensor(gy))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), **TOL)
    np.testing.assert_allclose(xv.grad, xt.grad.numpy(), **TOL)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad, theirs_params[names.get(name, name)].grad.numpy(), **TOL, err_msg=name)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch(approximate):
    x = np.concatenate([np.linspace(-8, 8, 101), [0.0, -30.0, 30.0, 1e-8]])
    gy = np.random.default_rng(0).normal(size=x.shape)
    xv = Variable.from_numpy(x)
    Engine.backward(GELUOp(approximate)(xv), grad=gy)
    xt = _t(x)
    torch.nn.functional.gelu(xt, approximate=approximate).backward(torch.tensor(gy))
    np.testing.assert_allclose(GELUOp(approximate)(Variable.from_numpy(x)).data,
                               torch.nn.functional.gelu(_t(x, False), approximate=approximate).numpy(), **TOL)
    np.testing.assert_allclose(xv.grad, xt.grad.numpy(), **TOL)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_of_a_0_d_value_is_x_times_phi_of_x(approximate):
    """GELU(0.5) = 0.5·Φ(0.5) = 0.5·0.6914625 = 0.34573123 (the exact form's per-element erf once failed on 0-d)."""
    y = GELUOp(approximate)(Variable.from_numpy(np.array(0.5)))
    assert y.shape == () and y.data == pytest.approx(0.34573123, abs=2e-4 if approximate == "tanh" else 1e-8)


def test_gelu_keeps_float32_and_refuses_unknown_form():
    y = GELUOp("tanh")(Variable.from_numpy(np.ones(3, np.float32)))
    assert y.dtype == np.float32
    assert GELUOp()(Variable.from_numpy(np.ones(3, np.float32))).dtype == np.float32
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        GELUOp("erf")


def test_embedding_matches_torch_with_repeated_ids():
    rng = np.random.default_rng(3)
    table = rng.normal(size=(6, 4))
    ids = np.array([[1, 5, 1], [0, 1, 3]])
    gy = rng.normal(size=(2, 3, 4))
    w = Variable.from_numpy(table)
    y = EmbeddingOp()(w, Variable.from_numpy(ids))
    Engine.backward(y, grad=gy)
    wt = _t(table)
    torch.nn.functional.embedding(torch.tensor(ids), wt).backward(torch.tensor(gy))
    np.testing.assert_array_equal(y.data, table[ids])
    np.testing.assert_allclose(w.grad, wt.grad.numpy(), **TOL)
    assert np.allclose(w.grad[1], gy[0, 0] + gy[0, 2] + gy[1, 1]), "id 1 occurs three times: its gradients add up"
    assert np.all(w.grad[2] == 0) and np.all(w.grad[4] == 0), "rows no id picked get no gradient"


@pytest.mark.parametrize("bad, where", [(6.0, "ids[1] = 6.0"), (-1.0, "ids[1] = -1.0"), (1.5, "ids[1] = 1.5"),
                                        (np.nan, "ids[1] = nan")])
def test_embedding_refuses_ids_outside_the_table(bad, where):
    table = Variable.from_numpy(np.zeros((6, 2)))
    pattern = r"whole numbers in \[0, 6\).*" + where.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(ShapeError, match=pattern):
        EmbeddingOp()(table, Variable.from_numpy(np.array([0.0, bad])))


def test_embedding_layer_takes_arrays_and_variables():
    layer = Embedding(10, 3, rng=0)
    assert layer(np.array([1, 2])).shape == (2, 3)
    assert layer(Variable.from_numpy(np.array([[9.0]]))).shape == (1, 1, 3)


def test_attention_refuses_bad_masks_and_widths():
    mha = MultiheadAttention(4, 2, batch_first=True, rng=0, dtype=np.float64)
    x = Variable.from_numpy(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(3, 3\)"):
        mha(x, attn_mask=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(2, 3\)"):
        mha(x, key_padding_mask=np.zeros((3,), bool))
    with pytest.raises(ValueError, match="not divisible"):
        MultiheadAttention(5, 2)


def test_attention_and_encoder_pass_gradcheck_in_float64():
    """Central differences in float64, no PyTorch involved: the inputs' gradients through a whole encoder layer
    (pre-norm, exact GELU, causal mask) and through cross-attention with a float mask."""
    from autograd_lab import gradcheck

    rng = np.random.default_rng(11)
    layer = TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", batch_first=True, norm_first=True,
                                    rng=rng, dtype=np.float64)
    mask = causal_mask(3)
    gradcheck(lambda x: layer(x, src_mask=mask), [rng.normal(size=(2, 3, 4))])
    mha = MultiheadAttention(4, 2, batch_first=True, rng=rng, dtype=np.float64)
    scores_bias = rng.normal(size=(3, 5))
    gradcheck(lambda a, b: mha(a, b, b, attn_mask=scores_bias)[0], [rng.normal(size=(2, 3, 4)),
                                                                    rng.normal(size=(2, 5, 4))])
