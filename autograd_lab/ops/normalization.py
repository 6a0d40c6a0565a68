"""Normalisation ops: layer normalization (Ba, Kiros & Hinton, "Layer Normalization", arXiv:1607.06450, 2016) and
batch normalization with running statistics (Ioffe & Szegedy, ICML 2015, arXiv:1502.03167)."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from autograd_lab.config import Config
from autograd_lab.operator import Operator


class LayerNormOp(Operator):
    """Normalise each row over the last axis, then scale and shift: ``LayerNormOp()(x[, gamma[, beta]])``.

    Shapes: x (..., D); gamma (D,) and beta (D,), both optional (without them the scale is 1 and the shift 0).
    Output: x's shape and dtype.

        μ = mean(x),  σ² = mean((x - μ)²),  r = 1/√(σ² + eps),  x̂ = (x - μ)·r,  y = γ ⊙ x̂ + β

    The variance is taken of the centred values (two passes), never as E[x²] - E[x]², which cancels catastrophically
    when |μ| ≫ σ (rows like 1e8 + [1, 2, 3] would get variance 0 or negative).

    Backward, with ĝ = gy ⊙ γ and means taken over the last axis (derived from the chain rule through μ and σ²):
        dx = r ⊙ (ĝ - mean(ĝ) - x̂ ⊙ mean(ĝ ⊙ x̂)),  dγ = Σ gy ⊙ x̂,  dβ = Σ gy  (sums over all but the last axis).

    Args:
        eps: added to the variance before the square root, so a constant row maps to 0 instead of NaN.

    Raises:
        ShapeError: if gamma or beta is not of shape (D,) (names the op, the shapes and the calling line).
    """

    saved = ("_xhat", "_rstd")

    _xhat: np.ndarray
    _rstd: np.ndarray

    def __init__(self, eps: float = 1e-5) -> None:
        self.eps = eps

    def forward(self, x: np.ndarray, gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> np.ndarray:
        if x.ndim == 0:
            raise ValueError("x must have at least one axis (the one normalised)")
        d = x.shape[-1:]
        for name, v in (("gamma", gamma), ("beta", beta)):
            if v is not None and v.shape != d:
                raise ValueError(f"{name} must have shape {d} (the last axis of x, shape {x.shape}), got {v.shape}")
        xc = x - x.mean(axis=-1, keepdims=True)
        var = (xc * xc).mean(axis=-1, keepdims=True)
        self._rstd = 1 / np.sqrt(var + x.dtype.type(self.eps))
        self._xhat = xc * self._rstd
        y = self._xhat
        if gamma is not None:
            y = y * gamma
        if beta is not None:
            y = y + beta
        return y

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x, *params = self.inputs
        xhat = self._xhat
        lead = tuple(range(x.ndim - 1))
        grads: list[np.ndarray | None] = [None] * len(self.inputs)
        if self.needs_grad(0):
            g = gy * params[0] if params else gy
            grads[0] = self._rstd * (
                g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)
            )
        if len(params) >= 1 and self.needs_grad(1):
            grads[1] = (gy * xhat).sum(axis=lead)
        if len(params) == 2 and self.needs_grad(2):
            grads[2] = gy.sum(axis=lead)
        return grads


class RunningStats:
    """The running mean and variance of a batch-norm layer: a holder whose arrays are replaced, never written.

    Attributes:
        mean: (C,) estimate of each channel's mean, initially 0 (read-only array).
        var: (C,) estimate of each channel's variance (unbiased), initially 1 (read-only array).
        count: how many training batches have updated the estimates (informative; not used in the formulas).

    :class:`BatchNormOp` in training mode assigns new arrays to ``mean`` and ``var``; in evaluation mode it reads
    them. Owned by the layer (:class:`autograd_lab.nn.BatchNorm2d`), saved and loaded with its model.

    Raises:
        ValueError: for a non-positive number of features.
    """

    def __init__(self, num_features: int, dtype: DTypeLike = np.float32) -> None:
        if isinstance(num_features, bool) or not isinstance(num_features, (int, np.integer)) or num_features < 1:
            raise ValueError(f"RunningStats: num_features must be a positive integer, got {num_features!r}")
        self.mean = _frozen(np.zeros(int(num_features), dtype=dtype))
        self.var = _frozen(np.ones(int(num_features), dtype=dtype))
        self.count = 0

    @property
    def num_features(self) -> int:
        return int(self.mean.shape[0])

    def __repr__(self) -> str:
        return f"RunningStats({self.num_features}, {self.mean.dtype})"


def _channel_sum(a: np.ndarray) -> np.ndarray:
    """Σ over every axis but 1, kept as (1, C) or (1, C, 1, 1). The batch axis goes first: adding whole contiguous
    samples is vectorised, where one reduction over axes (0, 2, 3) walks the array in short strided runs (≈5x
    slower for (64, 8, 28, 28) float32)."""
    total = np.add.reduce(a, axis=0, keepdims=True)
    if a.ndim == 4:
        total = np.add.reduce(total, axis=(2, 3), keepdims=True)
    return total


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class BatchNormOp(Operator):
    """Batch normalisation: ``BatchNormOp(stats, momentum=0.1, eps=1e-5)(x, gamma, beta)``.

    Source: S. Ioffe, C. Szegedy, "Batch Normalization: Accelerating Deep Network Training by Reducing Internal
    Covariate Shift", ICML 2015 (arXiv:1502.03167), Algorithm 1 and §3.1.

    Shapes: x (N, C) or (N, C, H, W); gamma and beta (C,). Output: x's shape and dtype. Statistics are per channel c,
    over the m = N (or N·H·W) values of that channel.

    Training (``Config.is_training``), with batch statistics (the variance of the centred values, two passes, so
    rows like [9999, 10000, 10001] do not cancel):

        μ = mean(x),  σ² = mean((x - μ)²),  r = 1/√(σ² + eps),  x̂ = (x - μ)·r,  y = γ x̂ + β
        dx = r ⊙ (ĝ - mean(ĝ) - x̂ ⊙ mean(ĝ ⊙ x̂)),  ĝ = gy ⊙ γ,  dγ = Σ gy ⊙ x̂,  dβ = Σ gy

    and, inside ``forward``, ``stats.mean`` and ``stats.var`` are *replaced* by new arrays (PyTorch's convention:
    the unbiased variance σ²·m/(m - 1) goes into the running estimate):

        stats.mean ← (1 - momentum)·stats.mean + momentum·μ
        stats.var  ← (1 - momentum)·stats.var + momentum·σ²·m/(m - 1)

    With ``momentum=None`` the running estimates are the cumulative averages of all the batches seen (PyTorch's
    ``momentum=None``): the update above with momentum 1/k for the k-th batch (k = ``stats.count`` after it).

    Evaluation (``eval_mode()``): y = γ (x - stats.mean)/√(stats.var + eps) + β, an affine map of x, so
    dx = gy ⊙ γ·r with r = 1/√(stats.var + eps); dγ and dβ as above.

    Without running statistics (``stats=None``, PyTorch's ``track_running_stats=False``) both modes normalise with
    the batch statistics, as in training, and nothing is updated.

    The exporter folds batch norm into the preceding convolution from ``op.stats``, ``op.eps`` and the gamma/beta
    inputs.

    Args:
        stats: the layer's :class:`RunningStats`, of C features, or None for none (batch statistics in both modes).
        momentum: weight of the new batch in the running estimates, in [0, 1], or None for the cumulative average.
        eps: added to the variance before the square root, > 0 keeps a constant channel finite.

    Raises:
        TypeError: if ``stats`` is not a RunningStats or None. ValueError: for momentum outside [0, 1] or a negative
            eps.
        ShapeError: naming the op, the shapes and the calling line, for x not 2-D or 4-D, a channel count that differs
            from gamma's, beta's or the statistics', or a training batch with a single value per channel.
    """

    saved = ("_training", "_rstd", "_xc")

    training_dependent = True
    _xc: np.ndarray
    _rstd: np.ndarray
    _training: bool

    def __init__(self, stats: RunningStats | None, momentum: float | None = 0.1, eps: float = 1e-5) -> None:
        if stats is not None and not isinstance(stats, RunningStats):
            raise TypeError(f"BatchNormOp: stats must be a RunningStats or None, got {type(stats).__name__}")
        if momentum is not None and not 0 <= momentum <= 1:
            raise ValueError(f"BatchNormOp: momentum must be in [0, 1] or None, got {momentum}")
        if not eps >= 0:
            raise ValueError(f"BatchNormOp: eps must be ≥ 0, got {eps}")
        self.stats = stats
        self.momentum = None if momentum is None else float(momentum)
        self.eps = float(eps)

    def forward(self, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
        if x.ndim not in (2, 4):
            raise ValueError(f"BatchNormOp: x must be (N, C) or (N, C, H, W), got {x.ndim}-D")
        c = x.shape[1]
        stats = self.stats
        checked = [("gamma", gamma), ("beta", beta)]
        if stats is not None:
            checked += [("stats.mean", stats.mean), ("stats.var", stats.var)]
        for name, v in checked:
            if v.shape != (c,):
                raise ValueError(f"BatchNormOp: {name} must have shape ({c},) (the channels of x), got {v.shape}")
        shape = (1, c) if x.ndim == 2 else (1, c, 1, 1)  # per-channel values broadcast against x
        one = x.dtype.type(1)
        # Without running statistics, evaluation normalises with the batch statistics too.
        self._training = training = Config.is_training or stats is None
        if training:
            m = x.size // c
            if m < 2:
                raise ValueError(f"BatchNormOp: training needs more than one value per channel to estimate a "
                                 f"variance, got {m} (use a larger batch, or eval_mode())")
            inv_m = x.dtype.type(1 / m)
            mean = _channel_sum(x) * inv_m
            xc = x - mean
            var = _channel_sum(np.square(xc)) * inv_m
            self._rstd = one / np.sqrt(var + x.dtype.type(self.eps))
            self._xc = xc  # x̂ = xc·r is formed only where needed: one pass less per step
            if stats is not None and Config.is_training:
                self._update_stats(stats, mean.reshape(c), var.reshape(c), m)
        else:
            assert stats is not None
            mean = stats.mean.astype(x.dtype, copy=False).reshape(shape)
            self._rstd = one / np.sqrt(stats.var.astype(x.dtype, copy=False).reshape(shape)
                                       + x.dtype.type(self.eps))
            self._xc = x - mean
        y = self._xc * (self._rstd * gamma.reshape(shape))
        y += beta.reshape(shape)
        return y

    def _update_stats(self, stats: RunningStats, mean: np.ndarray, var: np.ndarray, m: int) -> None:
        """Replace the running estimates with new arrays (one someone else holds is never changed)."""
        dtype = stats.mean.dtype
        mom = 1 / (stats.count + 1) if self.momentum is None else self.momentum
        stats.mean = _frozen(((1 - mom) * stats.mean + mom * mean).astype(dtype))
        stats.var = _frozen(((1 - mom) * stats.var + mom * var * (m / (m - 1))).astype(dtype))
        stats.count += 1

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x, gamma, _ = self.inputs
        xc, rstd = self._xc, self._rstd
        c = x.shape[1]
        shape = (1, c) if x.ndim == 2 else (1, c, 1, 1)
        # Per-channel sums first: dβ = Σ gy and dγ = Σ gy ⊙ x̂ = r Σ gy ⊙ xc. The input gradient reuses them, since
        # mean(ĝ) = γ dβ / m and mean(ĝ ⊙ x̂) = γ dγ / m, so dx = γ r (gy - dβ/m - x̂ dγ/m) costs three passes over x.
        sum_gy = _channel_sum(gy)
        sum_gy_xhat = _channel_sum(gy * xc) * rstd
        grads: list[np.ndarray | None] = [None, None, None]
        if self.needs_grad(0):
            scale = gamma.reshape(shape) * rstd
            if self._training:
                inv_m = x.dtype.type(c / x.size)
                gx = gy * scale
                gx -= xc * (scale * rstd * sum_gy_xhat * inv_m)
                gx -= scale * sum_gy * inv_m
            else:
                gx = gy * scale
            grads[0] = gx
        if self.needs_grad(1):
            grads[1] = sum_gy_xhat.reshape(c)
        if self.needs_grad(2):
            grads[2] = sum_gy.reshape(c)
        return grads
