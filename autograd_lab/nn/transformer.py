"""Transformer pieces from the explicit operators: token and learned positional embeddings, the encoder layer, and a
tiny vision transformer that reads an MNIST digit as 16 patches of 7×7 pixels.

The encoder layer follows Vaswani et al., "Attention Is All You Need" (NeurIPS 2017, §3.1) in PyTorch's
``nn.TransformerEncoderLayer`` form, with its sub-module names (``self_attn``, ``linear1``, ``linear2``, ``norm1``,
``norm2``) and both orders of the residual blocks:

    post-norm (norm_first=False):  x = norm1(x + SA(x));        x = norm2(x + FF(x))
    pre-norm  (norm_first=True):   x = x + SA(norm1(x));        x = x + FF(norm2(x))

with SA the self-attention block and FF(x) = linear2(dropout(act(linear1(x)))). Pre-norm trains more easily in
small, shallow models (Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020). The
vision transformer is Dosovitskiy et al.'s ViT ("An Image is Worth 16x16 Words", ICLR 2021) in miniature, with the
tokens' mean instead of a class token.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.nn.attention import MultiheadAttention, mean_over_tokens
from autograd_lab.nn.init import as_generator
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.module import Module
from autograd_lab.nn.regularization import Dropout, LayerNorm
from autograd_lab.ops import AddOp, EmbeddingOp, GELUOp, ReLUOp, ReshapeOp, TransposeOp
from autograd_lab.variable import Parameter, Variable

#: The feed-forward block's activation by name: "gelu" is the exact form (as PyTorch's string "gelu"),
#: "gelu_tanh" the tanh approximation (PyTorch's ``approximate="tanh"``), far cheaper here.
ACTIVATIONS = {"relu": lambda: ReLUOp(), "gelu": lambda: GELUOp(), "gelu_tanh": lambda: GELUOp("tanh")}


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of width ``dim``: ``Embedding(V, E)(ids)`` -> (..., E).

    ``weight`` is (V, E), drawn from N(0, 1) as PyTorch's ``nn.Embedding``. ids: a Variable or array of whole
    numbers in [0, V); an id outside raises ShapeError naming it (:class:`~autograd_lab.ops.EmbeddingOp`).
    """

    def __init__(self, num_embeddings: int, dim: int, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        self.num_embeddings, self.dim = int(num_embeddings), int(dim)
        self.weight = Parameter(as_generator(rng).standard_normal((self.num_embeddings, self.dim)).astype(dtype),
                                name="weight")

    def forward(self, ids: Variable | np.ndarray) -> Variable:
        if not isinstance(ids, Variable):
            ids = Variable.from_numpy(np.asarray(ids))
        return EmbeddingOp()(self.weight, ids)

    def config(self) -> dict[str, Any]:
        return {"num_embeddings": self.num_embeddings, "dim": self.dim, "dtype": self.weight.dtype.name}


class PositionalEmbedding(Module):
    """A learned position vector added to each token: (N, T, E) -> (N, T, E), ``weight`` (T, E) ~ N(0, 0.02²)."""

    def __init__(self, num_positions: int, dim: int, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        self.num_positions, self.dim = int(num_positions), int(dim)
        gen = as_generator(rng)
        self.weight = Parameter((0.02 * gen.standard_normal((self.num_positions, self.dim))).astype(dtype),
                                name="weight")

    def forward(self, x: Variable) -> Variable:
        """Raises ShapeError (from AddOp) if x's last two axes are not (T, E)."""
        return AddOp()(x, self.weight)

    def config(self) -> dict[str, Any]:
        return {"num_positions": self.num_positions, "dim": self.dim, "dtype": self.weight.dtype.name}


class TransformerEncoderLayer(Module):
    """One encoder layer: self-attention and a feed-forward block, each with a residual connection and layer norm.

    Shapes: src (T, N, E), or (N, T, E) with ``batch_first=True``; output the same. Masks as
    :class:`~autograd_lab.nn.attention.MultiheadAttention`'s (``src_mask`` is its ``attn_mask``).

    Args:
        d_model: E. nhead: heads. dim_feedforward: the hidden width of the feed-forward block.
        dropout: after the attention weights, inside the feed-forward block and on both residual branches.
        activation: ``"relu"``, ``"gelu"`` (exact) or ``"gelu_tanh"`` (:data:`ACTIVATIONS`).
        layer_norm_eps: the norms' eps. batch_first, norm_first: as PyTorch's.
        rng, dtype: initial weights (as PyTorch's layers) and dropout masks; parameter dtype.

    Raises:
        ValueError: for an unknown activation or d_model not divisible by nhead.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"TransformerEncoderLayer: activation must be one of {sorted(ACTIVATIONS)}, "
                             f"got {activation!r}")
        gen = as_generator(rng)
        self.d_model, self.nhead, self.dim_feedforward = int(d_model), int(nhead), int(dim_feedforward)
        self.dropout_p, self.activation = float(dropout), activation
        self.layer_norm_eps, self.batch_first, self.norm_first = float(layer_norm_eps), bool(batch_first), \
            bool(norm_first)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True, rng=gen, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, init="fan_in_uniform", rng=gen, dtype=dtype)
        self.linear2 = Linear(dim_feedforward, d_model, init="fan_in_uniform", rng=gen, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropouts = [Dropout(dropout, rng=gen) for _ in range(3)] if dropout > 0 else []

    def _drop(self, i: int, x: Variable) -> Variable:
        return self.dropouts[i](x) if self.dropouts else x

    def _attention(self, x: Variable, mask: np.ndarray | None, padding: np.ndarray | None, causal: bool) -> Variable:
        out, _ = self.self_attn(x, attn_mask=mask, key_padding_mask=padding, need_weights=False, is_causal=causal)
        return self._drop(1, out)

    def _feed_forward(self, x: Variable) -> Variable:
        hidden = self._drop(0, ACTIVATIONS[self.activation]()(self.linear1(x)))
        return self._drop(2, self.linear2(hidden))

    def forward(self, src: Variable, src_mask: np.ndarray | None = None,
                src_key_padding_mask: np.ndarray | None = None, is_causal: bool = False) -> Variable:
        x = src if self.batch_first else TransposeOp((1, 0, 2))(src)
        if self.norm_first:
            x = AddOp()(x, self._attention(self.norm1(x), src_mask, src_key_padding_mask, is_causal))
            x = AddOp()(x, self._feed_forward(self.norm2(x)))
        else:
            x = self.norm1(AddOp()(x, self._attention(x, src_mask, src_key_padding_mask, is_causal)))
            x = self.norm2(AddOp()(x, self._feed_forward(x)))
        return x if self.batch_first else TransposeOp((1, 0, 2))(x)

    def config(self) -> dict[str, Any]:
        return {"d_model": self.d_model, "nhead": self.nhead, "dim_feedforward": self.dim_feedforward,
                "dropout": self.dropout_p, "activation": self.activation, "layer_norm_eps": self.layer_norm_eps,
                "batch_first": self.batch_first, "norm_first": self.norm_first,
                "dtype": self.linear1.weight.dtype.name}


def patchify(x: Variable, image_size: int, patch_size: int) -> Variable:
    """(N, image_size²) or (N, 1, S, S) images -> (N, P, patch_size²) tokens, P = (S/patch_size)², patches read
    row by row, each patch's pixels row by row. Built from ReshapeOp and TransposeOp, so it is part of the graph."""
    n = x.shape[0]
    g, p = image_size // patch_size, patch_size
    grid = ReshapeOp((n, g, p, g, p))(x)
    return ReshapeOp((n, g * g, p * p))(TransposeOp((0, 1, 3, 2, 4))(grid))


class VisionTransformer(Module):
    """A tiny ViT for 28×28 digits: patches -> linear embedding + learned positions -> encoder layers -> layer norm
    -> the tokens' mean -> class logits.

    Shapes: x (N, 784) or (N, 1, 28, 28) -> logits (N, num_classes).

    Args:
        image_size, patch_size: S and p, p divides S (16 patches of 7×7 for MNIST by default).
        dim, depth, heads, mlp_dim: the width E, the number of encoder layers, heads per layer, feed-forward width.
        dropout: of every encoder layer. activation: the feed-forward activation (:data:`ACTIVATIONS`).
        norm_first: pre-norm layers (default) or post-norm.
        num_classes, rng, dtype: as the other models.

    Raises:
        ValueError: if patch_size does not divide image_size, or for an encoder layer's reasons.
    """

    def __init__(self, image_size: int = 28, patch_size: int = 7, dim: int = 64, depth: int = 2, heads: int = 4,
                 mlp_dim: int = 128, dropout: float = 0.0, activation: str = "gelu_tanh", norm_first: bool = True,
                 num_classes: int = 10, rng: np.random.Generator | int | None = None, dtype: Any = np.float32) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"VisionTransformer: patch_size {patch_size} does not divide image_size {image_size}")
        gen = as_generator(rng)
        self.image_size, self.patch_size, self.dim, self.depth = int(image_size), int(patch_size), int(dim), int(depth)
        self.heads, self.mlp_dim, self.dropout_p = int(heads), int(mlp_dim), float(dropout)
        self.activation, self.norm_first, self.num_classes = activation, bool(norm_first), int(num_classes)
        tokens = (self.image_size // self.patch_size) ** 2
        self.embed = Linear(self.patch_size**2, self.dim, init="fan_in_uniform", rng=gen, dtype=dtype)
        self.position = PositionalEmbedding(tokens, self.dim, rng=gen, dtype=dtype)
        self.layers = [TransformerEncoderLayer(self.dim, self.heads, self.mlp_dim, dropout=self.dropout_p,
                                               activation=activation, batch_first=True, norm_first=self.norm_first,
                                               rng=gen, dtype=dtype) for _ in range(self.depth)]
        self.norm = LayerNorm(self.dim, dtype=dtype)
        self.head = Linear(self.dim, self.num_classes, init="fan_in_uniform", rng=gen, dtype=dtype)

    def forward(self, x: Variable) -> Variable:
        h = self.position(self.embed(patchify(x, self.image_size, self.patch_size)))
        for layer in self.layers:
            h = layer(h)
        return self.head(mean_over_tokens(self.norm(h)))

    def config(self) -> dict[str, Any]:
        return {"image_size": self.image_size, "patch_size": self.patch_size, "dim": self.dim, "depth": self.depth,
                "heads": self.heads, "mlp_dim": self.mlp_dim, "dropout": self.dropout_p,
                "activation": self.activation, "norm_first": self.norm_first, "num_classes": self.num_classes,
                "dtype": self.head.weight.dtype.name}
