"""Chapter 13 (attention): correct answers of other designs than the solution's; each must pass every test."""

from ..spec import Alternative

ALTERNATIVES = [
    Alternative("attention_code", "constant on the left of MulOp, d ** -0.5, a positive softmax axis",
                source='''def attention(q, k, v, mask=None):
    """Scaled dot-product attention, softmax(q kᵀ / √d + M) v, over the last two axes.

    q: Variable (..., Tq, d); k: Variable (..., Tk, d); v: Variable (..., Tk, dv); leading axes broadcast.
    mask: None; a boolean array broadcastable to (..., Tq, Tk), True where a query may NOT look at a key;
        or a float array, added to the scores as it is.
    Returns (out, weights): out (..., Tq, dv) and the softmax weights (..., Tq, Tk), both Variables.
    """
    d = q.shape[-1]
    scores = MulOp()(Variable.from_numpy(np.asarray(d ** -0.5, dtype=q.dtype)), MatMulOp(transpose_b=True)(q, k))
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype == bool:
            m = np.where(m, np.array(-np.inf, q.dtype), np.array(0.0, q.dtype))
        scores = AddOp()(Variable.from_numpy(np.asarray(m, dtype=q.dtype)), scores)
    weights = SoftmaxOp(axis=len(scores.shape) - 1)(scores)
    return MatMulOp()(weights, v), weights
'''),
    Alternative("attention_code", "DivOp by sqrt(d), np.issubdtype for the mask kind, np.full for the -inf",
                source='''def attention(q, k, v, mask=None):
    """Scaled dot-product attention, softmax(q kᵀ / √d + M) v, over the last two axes.

    q: Variable (..., Tq, d); k: Variable (..., Tk, d); v: Variable (..., Tk, dv); leading axes broadcast.
    mask: None; a boolean array broadcastable to (..., Tq, Tk), True where a query may NOT look at a key;
        or a float array, added to the scores as it is.
    Returns (out, weights): out (..., Tq, dv) and the softmax weights (..., Tq, Tk), both Variables.
    """
    from autograd_lab.ops import DivOp
    root_d = Variable.from_numpy(np.sqrt(np.array(q.shape[-1], dtype=q.dtype)))
    scores = DivOp()(MatMulOp(transpose_b=True)(q, k), root_d)
    if mask is not None:
        mask = np.asarray(mask)
        if np.issubdtype(mask.dtype, np.bool_):
            additive = np.zeros(mask.shape, dtype=q.dtype)
            additive[mask] = -np.inf
        else:
            additive = mask.astype(q.dtype)
        scores = AddOp()(scores, Variable.from_numpy(additive))
    weights = SoftmaxOp(axis=-1)(scores)
    out = MatMulOp()(weights, v)
    return out, weights
'''),
    Alternative("masks_code", "index comparisons with broadcasting; padding rows filled in a loop",
                source='''def causal_mask(length):
    """(length, length) boolean array: True where query i may NOT look at key j (the keys after i)."""
    i = np.arange(length)
    return i[:, None] < i[None, :]


def padding_mask(lengths, length):
    """(N, 1, length) boolean array: True at the padding keys j >= lengths[n] of sequence n."""
    out = np.zeros((len(lengths), 1, length), dtype=bool)
    for n, l in enumerate(lengths):
        out[n, 0, int(l):] = True
    return out
'''),
    Alternative("masks_code", "the complement of np.tri; padding by a reshape and np.newaxis",
                source='''def causal_mask(length):
    """(length, length) boolean array: True where query i may NOT look at key j (the keys after i)."""
    return ~np.tri(length, dtype=bool)


def padding_mask(lengths, length):
    """(N, 1, length) boolean array: True at the padding keys j >= lengths[n] of sequence n."""
    keys = np.arange(length)
    return np.greater_equal(keys, np.reshape(lengths, (-1, 1)))[:, np.newaxis, :]
'''),
    Alternative("multihead_code", "three projections from weight row slices, one attention call per head, heads "
                "stacked and reshaped",
                source='''def multihead_self_attention(x, in_proj_weight, in_proj_bias, out_weight, out_bias, num_heads, mask=None):
    """Multi-head self-attention in PyTorch's layout (see the text above).

    x: Variable (N, T, E); in_proj_weight (3E, E), in_proj_bias (3E,), out_weight (E, E), out_bias (E,): Variables;
    num_heads: h, dividing E; mask: None or a (T, T) boolean or float mask for every head.
    Returns a Variable (N, T, E).
    """
    n, t, e = x.shape
    d = e // num_heads

    def project(block):
        rows = lambda w: SliceOp(block * e, (block + 1) * e, axis=0)(w)  # a new op for every use
        return AddOp()(MatMulOp(transpose_b=True)(x, rows(in_proj_weight)), rows(in_proj_bias))

    q, k, v = project(0), project(1), project(2)
    outs = []
    for h in range(num_heads):
        cut = lambda u: SliceOp(h * d, (h + 1) * d, axis=2)(u)
        z, _ = attention(cut(q), cut(k), cut(v), mask)
        outs.append(z)
    z = ReshapeOp((n, t, e))(StackOp(axis=2)(*outs))  # (N, T, h, d) -> (N, T, E): head order kept
    return AddOp()(MatMulOp()(z, TransposeOp()(out_weight)), out_bias)
'''),
    Alternative("multihead_code", "one reshape to (N, T, 3, h, d) and one transpose to (3, N, h, T, d)",
                source='''def multihead_self_attention(x, in_proj_weight, in_proj_bias, out_weight, out_bias, num_heads, mask=None):
    """Multi-head self-attention in PyTorch's layout (see the text above).

    x: Variable (N, T, E); in_proj_weight (3E, E), in_proj_bias (3E,), out_weight (E, E), out_bias (E,): Variables;
    num_heads: h, dividing E; mask: None or a (T, T) boolean or float mask for every head.
    Returns a Variable (N, T, E).
    """
    n, t, e = x.shape
    h, d = num_heads, e // num_heads
    qkv = AddOp()(in_proj_bias, MatMulOp(transpose_b=True)(x, in_proj_weight))
    qkv = TransposeOp((2, 0, 3, 1, 4))(ReshapeOp((n, t, 3, h, d))(qkv))  # (3, N, h, T, d)
    q, k, v = (ReshapeOp((n, h, t, d))(SliceOp(i, i + 1, axis=0)(qkv)) for i in range(3))
    z, _ = attention(q, k, v, mask=mask)
    z = ReshapeOp((n, t, e))(TransposeOp((0, 2, 1, 3))(z))
    return AddOp()(out_bias, MatMulOp(transpose_b=True)(z, out_weight))
'''),
    Alternative("encoder_layer_code", "a parameter lookup helper, the residual added on the right, TransposeOp",
                source='''def encoder_layer(x, params, num_heads, mask=None, dropout=0.0, rng=None):
    """A pre-norm transformer encoder layer with GELU (see the text above).

    x: Variable (N, T, E); params: dict name -> Variable, the names of TransformerEncoderLayer.named_parameters();
    num_heads: h; mask: None or (T, T), as for multihead_self_attention; dropout: probability in [0, 1), used in
    training mode only; rng: np.random.Generator for the dropout masks.
    Returns a Variable (N, T, E).
    """
    P = params.__getitem__

    def dense(u, name):
        return AddOp()(MatMulOp()(u, TransposeOp()(P(name + ".weight"))), P(name + ".bias"))

    def ln(u, name):
        return LayerNormOp(eps=1e-5)(u, P(name + ".gamma"), P(name + ".beta"))

    def maybe_drop(u):
        if dropout == 0:
            return u
        return DropoutOp(dropout, rng=rng)(u)

    a = multihead_self_attention(ln(x, "norm1"), P("self_attn.in_proj_weight"), P("self_attn.in_proj_bias"),
                                 P("self_attn.out_proj.weight"), P("self_attn.out_proj.bias"), num_heads, mask=mask)
    h = AddOp()(maybe_drop(a), x)
    f = dense(GELUOp()(dense(ln(h, "norm2"), "linear1")), "linear2")
    return AddOp()(maybe_drop(f), h)
'''),
    Alternative("encoder_layer_code", "its own dropout (a scaled mask leaf, training only), also inside the "
                "feed-forward block as the text allows",
                source='''def encoder_layer(x, params, num_heads, mask=None, dropout=0.0, rng=None):
    """A pre-norm transformer encoder layer with GELU (see the text above).

    x: Variable (N, T, E); params: dict name -> Variable, the names of TransformerEncoderLayer.named_parameters();
    num_heads: h; mask: None or (T, T), as for multihead_self_attention; dropout: probability in [0, 1), used in
    training mode only; rng: np.random.Generator for the dropout masks.
    Returns a Variable (N, T, E).
    """
    def drop(u):
        if dropout <= 0 or not Engine.is_training:
            return u
        keep = (rng.random(u.shape) >= dropout).astype(u.dtype) / u.dtype.type(1 - dropout)
        return MulOp()(u, Variable.from_numpy(keep))

    def norm(u, which):
        return LayerNormOp(1e-5)(u, params[which + ".gamma"], params[which + ".beta"])

    def linear(u, which):
        return AddOp()(MatMulOp(transpose_b=True)(u, params[which + ".weight"]), params[which + ".bias"])

    p = "self_attn."
    att = multihead_self_attention(norm(x, "norm1"), params[p + "in_proj_weight"], params[p + "in_proj_bias"],
                                   params[p + "out_proj.weight"], params[p + "out_proj.bias"], num_heads, mask)
    h = AddOp()(x, drop(att))
    hidden = drop(GELUOp()(linear(norm(h, "norm2"), "linear1")))
    return AddOp()(h, drop(linear(hidden, "linear2")))
'''),
]
