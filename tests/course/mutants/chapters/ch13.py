"""Chapter 13 (attention): plausible wrong answers to attention, the masks, multi-head attention and the encoder
layer."""

from ..spec import Mutant

_POST_NORM = '''def encoder_layer(x, params, num_heads, mask=None, dropout=0.0, rng=None):
    def drop(u):
        return DropoutOp(dropout, rng=rng)(u) if dropout > 0 else u

    def norm(u, which):
        return LayerNormOp(1e-5)(u, params[f"{which}.gamma"], params[f"{which}.beta"])

    def linear(u, which):
        return AddOp()(MatMulOp(transpose_b=True)(u, params[f"{which}.weight"]), params[f"{which}.bias"])

    attended = multihead_self_attention(x, params["self_attn.in_proj_weight"], params["self_attn.in_proj_bias"],
                                        params["self_attn.out_proj.weight"], params["self_attn.out_proj.bias"],
                                        num_heads, mask)
    h = norm(AddOp()(x, drop(attended)), "norm1")
    hidden = GELUOp()(linear(h, "linear1"))
    return norm(AddOp()(h, drop(linear(hidden, "linear2"))), "norm2")
'''

MUTANTS = [
    # attention
    Mutant("attention_code", "scores not scaled",
           edits=[("scores = MulOp()(MatMulOp(transpose_b=True)(q, k), scale)",
                   "scores = MatMulOp(transpose_b=True)(q, k)")], says=r"sqrt\(d\)|sqrt\(2\)"),
    Mutant("attention_code", "scores divided by d instead of sqrt(d)",
           edits=[("1.0 / math.sqrt(q.shape[-1])", "1.0 / q.shape[-1]")], says=r"by d\b|instead of sqrt"),
    Mutant("attention_code", "softmax over the queries (axis -2)",
           edits=[("SoftmaxOp(axis=-1)", "SoftmaxOp(axis=-2)")], says=r"over the keys|last axis|axis"),
    Mutant("attention_code", "scaled by the width of the values",
           edits=[("1.0 / math.sqrt(q.shape[-1])", "1.0 / math.sqrt(v.shape[-1])")], says=r"width of the quer"),
    Mutant("attention_code", "float mask added after the softmax",
           edits=[("        scores = AddOp()(scores, Variable.from_numpy(mask.astype(q.dtype)))\n"
                   "    weights = SoftmaxOp(axis=-1)(scores)\n",
                   "        weights = AddOp()(SoftmaxOp(axis=-1)(scores), Variable.from_numpy(mask.astype(q.dtype)))\n"
                   "    else:\n        weights = SoftmaxOp(axis=-1)(scores)\n")],
           says=r"before the softmax"),
    Mutant("attention_code", "mask added before the scaling",
           edits=[("    scores = MulOp()(MatMulOp(transpose_b=True)(q, k), scale)\n",
                   "    scores = MatMulOp(transpose_b=True)(q, k)\n"),
                  ("    weights = SoftmaxOp(axis=-1)(scores)\n",
                   "    weights = SoftmaxOp(axis=-1)(MulOp()(scores, scale))\n")],
           says=r"scaled scores|after the scaling"),
    Mutant("attention_code", "boolean mask inverted (-inf where False)",
           edits=[("np.where(mask, -np.inf, 0.0)", "np.where(mask, 0.0, -np.inf)")], says=r"NOT look|inverted"),
    Mutant("attention_code", "scale constant made in float64 (float32 becomes float64)",
           edits=[("np.array(1.0 / math.sqrt(q.shape[-1]), dtype=q.dtype)", "np.array(1.0 / math.sqrt(q.shape[-1]))")],
           says=r"float32"),
    Mutant("attention_code", "keys not transposed",
           edits=[("MatMulOp(transpose_b=True)(q, k)", "MatMulOp()(q, k)")], says=r"transpos"),
    # masks
    Mutant("masks_code", "causal mask hides the diagonal", edits=[("k=1)", "k=0)")], says=r"diagonal|itself"),
    Mutant("masks_code", "causal mask inverted",
           edits=[("np.triu(np.ones((length, length), dtype=bool), k=1)",
                   "np.tril(np.ones((length, length), dtype=bool), k=0)")], says=r"inverted|NOT see"),
    Mutant("masks_code", "causal mask transposed (hides the past)",
           edits=[("np.triu(np.ones((length, length), dtype=bool), k=1)",
                   "np.tril(np.ones((length, length), dtype=bool), k=-1)")], says=r"transposed|past|future"),
    Mutant("masks_code", "padding mask off by one (> instead of >=)",
           edits=[("[None, None, :] >= np.asarray", "[None, None, :] > np.asarray")], says=r"off by one|padding key"),
    Mutant("masks_code", "padding mask without the middle axis (N, T)",
           edits=[("np.arange(length)[None, None, :] >= np.asarray(lengths)[:, None, None]",
                   "np.arange(length)[None, :] >= np.asarray(lengths)[:, None]")], says=r"\(2, 1, 3\)|middle axis"),
    Mutant("masks_code", "padding mask over the queries (N, T, 1)",
           edits=[("np.arange(length)[None, None, :] >=", "np.arange(length)[None, :, None] >=")],
           says=r"\(2, 1, 3\)|middle axis|quer"),
    Mutant("masks_code", "causal mask of floats 0/1",
           edits=[("np.triu(np.ones((length, length), dtype=bool), k=1)", "np.triu(np.ones((length, length)), k=1)")],
           says=r"boolean"),
    Mutant("masks_code", "padding mask inverted (True at the real tokens)",
           edits=[("[None, None, :] >= np.asarray", "[None, None, :] < np.asarray")], says=r"padding key|inverted"),
    # multihead_self_attention
    Mutant("multihead_code", "projection reshaped straight into (N, h, T, d)",
           edits=[("TransposeOp((0, 2, 1, 3))(ReshapeOp((n, t, num_heads, d))(part))",
                   "ReshapeOp((n, num_heads, t, d))(part)")], says=r"reshape"),
    Mutant("multihead_code", "heads joined by a reshape without moving the head axis back",
           edits=[("z = ReshapeOp((n, t, e))(TransposeOp((0, 2, 1, 3))(z))", "z = ReshapeOp((n, t, e))(z)")],
           says=r"reshape|order"),
    Mutant("multihead_code", "queries and keys swapped (W_k block used for the queries)",
           edits=[("attention(heads(0), heads(1), heads(2), mask)", "attention(heads(1), heads(0), heads(2), mask)")],
           says=r"swapped|W_q"),
    Mutant("multihead_code", "out_bias forgotten",
           edits=[("return AddOp()(MatMulOp(transpose_b=True)(z, out_weight), out_bias)",
                   "return MatMulOp(transpose_b=True)(z, out_weight)")], says=r"out_bias"),
    Mutant("multihead_code", "out_weight not transposed",
           edits=[("MatMulOp(transpose_b=True)(z, out_weight)", "MatMulOp()(z, out_weight)")],
           says=r"transpose|W_o"),
    Mutant("multihead_code", "mask not passed to attention",
           edits=[("attention(heads(0), heads(1), heads(2), mask)", "attention(heads(0), heads(1), heads(2))")],
           says=r"mask"),
    Mutant("multihead_code", "in_proj_bias forgotten",
           edits=[("qkv = AddOp()(MatMulOp(transpose_b=True)(x, in_proj_weight), in_proj_bias)",
                   "qkv = MatMulOp(transpose_b=True)(x, in_proj_weight)")], says=r"in_proj_bias"),
    # encoder_layer
    Mutant("encoder_layer_code", "post-norm", source=_POST_NORM, says=r"post-norm"),
    Mutant("encoder_layer_code", "residual path starts after the norm",
           edits=[("h = AddOp()(x, drop(attended))", "h = AddOp()(norm(x, \"norm1\"), drop(attended))")],
           says=r"after the norm|post-norm"),
    Mutant("encoder_layer_code", "norm1 used for the feed-forward block too",
           edits=[('linear(norm(h, "norm2"), "linear1")', 'linear(norm(h, "norm1"), "linear1")')],
           says=r"LN2|norm2|beta2"),
    Mutant("encoder_layer_code", "feed-forward block reads x instead of H",
           edits=[('linear(norm(h, "norm2"), "linear1")', 'linear(norm(x, "norm2"), "linear1")')],
           says=r"reads H|not X|not x"),
    Mutant("encoder_layer_code", "GELU after linear2 instead of between the linears",
           edits=[('hidden = GELUOp()(linear(norm(h, "norm2"), "linear1"))', 'hidden = linear(norm(h, "norm2"), "linear1")'),
                  ('drop(linear(hidden, "linear2"))', 'drop(GELUOp()(linear(hidden, "linear2")))')],
           says=r"GELU"),
    Mutant("encoder_layer_code", "own dropout, applied in evaluation mode too",
           edits=[("        return DropoutOp(dropout, rng=rng)(u) if dropout > 0 else u\n",
                   "        if dropout == 0:\n            return u\n"
                   "        keep = (rng.random(u.shape) >= dropout) / (1 - dropout)\n"
                   "        return MulOp()(u, Variable.from_numpy(keep.astype(u.dtype)))\n")],
           says=r"eval"),
    Mutant("encoder_layer_code", "dropout never applied",
           edits=[("if dropout > 0 else u", "if False else u")], says=r"training mode"),
    Mutant("encoder_layer_code", "mask not passed to the attention",
           edits=[("                                        params[\"self_attn.out_proj.bias\"], num_heads, mask)",
                   "                                        params[\"self_attn.out_proj.bias\"], num_heads)")],
           says=r"mask"),
]
