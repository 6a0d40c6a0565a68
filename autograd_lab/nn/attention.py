"""Attention, built from the engine's explicit operators: scaled dot-product attention and multi-head attention.

Scaled dot-product attention (Vaswani et al., "Attention Is All You Need", NeurIPS 2017, eq. 1)::

    Attention(Q, K, V) = softmax(Q Kᵀ / √d + M) V

reads here as ``MatMulOp(transpose_b=True)``, a ``MulOp`` by 1/√d, an ``AddOp`` of the mask M, a ``SoftmaxOp`` over
the keys and a ``MatMulOp``: no new operator, so its gradient is the chain rule through those five, and the graph
drawings show each step. A mask is -inf where a query may not look (so its weight is exactly 0 after the softmax)
and 0 elsewhere; a boolean mask marks those positions with True, as ``torch.nn.MultiheadAttention``'s does.

:class:`MultiheadAttention` lays its parameters out as PyTorch's ``nn.MultiheadAttention`` (``in_proj_weight``
(3E, E) holding W_q, W_k, W_v one under the other, ``in_proj_bias`` (3E,), ``out_proj.weight`` (E, E),
``out_proj.bias``), so weights move between the two by name, and the tests compare both to 1e-6 in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.nn.init import as_generator
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.module import Module
from autograd_lab.nn.regularization import Dropout
from autograd_lab.ops import AddOp, MatMulOp, MeanOp, MulOp, ReshapeOp, SliceOp, SoftmaxOp, TransposeOp
from autograd_lab.variable import Parameter, Variable


def additive_mask(mask: np.ndarray, dtype: Any) -> np.ndarray:
    """A mask as the array added to the attention scores: a boolean mask becomes -inf where True and 0 elsewhere;
    a float mask is used as it is (cast to ``dtype``).

    Raises:
        TypeError: for a mask that is neither boolean nor floating point.
    """
    mask = np.asarray(mask)
    if mask.dtype == np.bool_:
        return np.where(mask, -np.inf, 0.0).astype(dtype)
    if mask.dtype.kind != "f":
        raise TypeError(f"an attention mask must be boolean (True = not attended) or float (added), got {mask.dtype}")
    return mask.astype(dtype)


def causal_mask(length: int) -> np.ndarray:
    """(length, length) boolean mask, True above the diagonal: position i may attend to positions ≤ i only."""
    return np.triu(np.ones((length, length), dtype=bool), k=1)


def scaled_dot_product_attention(q: Variable, k: Variable, v: Variable, mask: np.ndarray | None = None,
                                 dropout: Dropout | None = None) -> tuple[Variable, Variable]:
    """``softmax(q kᵀ/√d + mask) v`` over the last two axes.

    Shapes: q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv); batch axes broadcast. ``mask``, if given, broadcasts to
    (..., Tq, Tk) (see :func:`additive_mask`). A query whose keys are all masked gets NaN weights, as in PyTorch.

    Returns:
        (output (..., Tq, dv), weights (..., Tq, Tk)): the weights are the softmax, before dropout.
    """
    d = q.shape[-1]
    scores = MatMulOp(transpose_b=True)(q, k)
    scores = MulOp()(scores, Variable.from_numpy(np.array(1.0 / np.sqrt(d), dtype=q.dtype)))
    if mask is not None:
        scores = AddOp()(scores, Variable.from_numpy(additive_mask(mask, q.dtype)))
    weights = SoftmaxOp(axis=-1)(scores)
    attended = weights if dropout is None else dropout(weights)
    return MatMulOp()(attended, v), weights


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al. 2017, §3.2.2) with PyTorch's parameters, shapes and masks.

    ``MultiheadAttention(E, H)(query, key, value)``: the queries, keys and values are projected by the three blocks of
    ``in_proj_weight``, split into H heads of width E/H, attended per head (:func:`scaled_dot_product_attention`),
    put side by side again and projected by ``out_proj``.

    Shapes: query (Tq, N, E), key and value (Tk, N, E); with ``batch_first=True`` (N, Tq, E) and (N, Tk, E).
    Output: the query's layout. ``attn_mask``: (Tq, Tk) or (N·H, Tq, Tk), boolean (True = not attended) or float
    (added to the scores); ``key_padding_mask``: (N, Tk) boolean, True marks padding keys.

    Args:
        embed_dim: E, divisible by num_heads.
        num_heads: H.
        dropout: probability of dropping an attention weight in training.
        bias: whether the projections have biases.
        batch_first: the layout of the inputs and output.
        rng: generator or seed for the initial weights (Xavier uniform for ``in_proj_weight``, PyTorch's Linear
            initialisation for ``out_proj``; biases 0, as PyTorch) and for dropout.
        dtype: parameter dtype, float32 by default.

    Raises:
        ValueError: if embed_dim is not divisible by num_heads.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = False, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout_p, self.bias, self.batch_first = float(dropout), bool(bias), bool(batch_first)
        gen = as_generator(rng)
        e = self.embed_dim
        a = np.sqrt(6.0 / (e + 3 * e))
        self.in_proj_weight = Parameter(gen.uniform(-a, a, size=(3 * e, e)).astype(dtype), name="in_proj_weight")
        self.in_proj_bias = Parameter(np.zeros(3 * e, dtype), name="in_proj_bias") if bias else None
        self.out_proj = Linear(e, e, init="fan_in_uniform", rng=gen, dtype=dtype)
        self.out_proj.bias = Parameter(np.zeros(e, dtype), name="bias") if bias else None  # type: ignore[assignment]
        self.attn_dropout = Dropout(self.dropout_p, rng=gen) if self.dropout_p > 0 else None
        self.last_weights: np.ndarray | None = None

    def _project(self, x: Variable, block: int | None) -> Variable:
        """x (N, T, E) times the rows of ``in_proj_weight`` (all three blocks, or block 0/1/2), plus the bias."""
        e = self.embed_dim
        w: Variable = self.in_proj_weight
        b: Variable | None = self.in_proj_bias
        if block is not None:
            w = SliceOp(block * e, (block + 1) * e, axis=0)(w)
            b = None if b is None else SliceOp(block * e, (block + 1) * e, axis=0)(b)
        y = MatMulOp(transpose_b=True)(x, w)
        return y if b is None else AddOp()(y, b)

    def _heads(self, x: Variable) -> Variable:
        """(N, T, E) -> (N, H, T, E/H)."""
        n, t, _ = x.shape
        return TransposeOp((0, 2, 1, 3))(ReshapeOp((n, t, self.num_heads, self.head_dim))(x))

    # PyTorch's arguments, not Module's one input x:
    def forward(self, query: Variable, key: Variable | None = None,  # type: ignore[override]
                value: Variable | None = None,
                key_padding_mask: np.ndarray | None = None, need_weights: bool = True,
                attn_mask: np.ndarray | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Variable, np.ndarray | None]:
        """Attend; returns (output, weights) as PyTorch does. ``key``/``value`` default to ``query``
        (self-attention). The weights (a NumPy array, (N, Tq, Tk) averaged over heads or (N, H, Tq, Tk)) are also
        kept in ``last_weights`` for drawing; None if ``need_weights`` is False.

        Raises:
            ShapeError: if the widths differ from embed_dim or a mask has the wrong shape.
        """
        key = query if key is None else key
        value = key if value is None else value
        if not self.batch_first:
            query, key, value = (TransposeOp((1, 0, 2))(v) if v is not None else v for v in (query, key, value))
        n, tq, _ = query.shape
        tk = key.shape[1]
        if query is key and key is value:
            qkv = self._project(query, None)
            e = self.embed_dim
            q, k, v = (SliceOp(i * e, (i + 1) * e)(qkv) for i in range(3))
        else:
            q, k, v = self._project(query, 0), self._project(key, 1), self._project(value, 2)
        mask = self._mask(n, tq, tk, attn_mask, key_padding_mask, is_causal, query.dtype)
        out, weights = scaled_dot_product_attention(self._heads(q), self._heads(k), self._heads(v), mask,
                                                    self.attn_dropout)
        out = ReshapeOp((n, tq, self.embed_dim))(TransposeOp((0, 2, 1, 3))(out))
        out = MatMulOp(transpose_b=True)(out, self.out_proj.weight)
        if self.out_proj.bias is not None:
            out = AddOp()(out, self.out_proj.bias)
        if not self.batch_first:
            out = TransposeOp((1, 0, 2))(out)
        self.last_weights = None
        if need_weights:
            w = weights.data
            self.last_weights = w.mean(axis=1) if average_attn_weights else w.copy()
        return out, self.last_weights

    def _mask(self, n: int, tq: int, tk: int, attn_mask: np.ndarray | None, key_padding_mask: np.ndarray | None,
              is_causal: bool, dtype: Any) -> np.ndarray | None:
        """The additive mask, broadcastable to (N, H, Tq, Tk), or None."""
        total = None
        if is_causal and attn_mask is None:
            attn_mask = causal_mask(tq)
        if attn_mask is not None:
            m = additive_mask(attn_mask, dtype)
            if m.shape == (n * self.num_heads, tq, tk):
                m = m.reshape(n, self.num_heads, tq, tk)
            elif m.shape != (tq, tk):
                raise ValueError(f"MultiheadAttention: attn_mask must have shape ({tq}, {tk}) or "
                                 f"({n * self.num_heads}, {tq}, {tk}), got {m.shape}")
            total = m
        if key_padding_mask is not None:
            p = additive_mask(key_padding_mask, dtype)
            if p.shape != (n, tk):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape ({n}, {tk}), got {p.shape}")
            p = p.reshape(n, 1, 1, tk)
            total = p if total is None else total + p
        return total

    def config(self) -> dict[str, Any]:
        return {"embed_dim": self.embed_dim, "num_heads": self.num_heads, "dropout": self.dropout_p,
                "bias": self.bias, "batch_first": self.batch_first, "dtype": self.in_proj_weight.dtype.name}

    def __repr__(self) -> str:
        return f"MultiheadAttention({self.embed_dim}, num_heads={self.num_heads})"


def mean_over_tokens(x: Variable) -> Variable:
    """(N, T, E) -> (N, E): the average of the tokens, a transformer classifier's pooled representation."""
    return MeanOp(axis=1)(x)
