"""Loss functions: fused softmax cross-entropy and mean squared error. Each returns a 0-d (scalar) Variable, or one
loss per example with ``reduction="none"``."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


class SoftmaxCrossEntropyOp(Operator):
    """Cross-entropy of softmax(logits) against class indices or target probabilities (``F.cross_entropy``):
    ``SoftmaxCrossEntropyOp(reduction="mean", label_smoothing=0.0, ignore_index=-100)(logits, labels)``.

    Inputs (the class axis is axis 1, as in PyTorch; every other axis is one more example):
        logits: (N, C) or (N, C, d1, ..., dk), float32 or float64. A single example may be given as (C,), with a
            0-d or (1,) class index or (C,) probabilities; it is treated as N = 1.
        labels: either class indices of shape (N, d1, ..., dk), integer-valued and in [0, C) or equal to
            ``ignore_index`` (a Variable holds them as floats, so they are checked to be whole numbers), or target
            probabilities of the logits' shape. The rows of probability targets may sum to anything: a zero row
            (a masked example) has loss 0 and sends no gradient.

    For each example m (a position (n, d1, ..., dk)) with logits z_m and target distribution t_m (the one-hot row
    of an index label), label smoothing ε mixes in the uniform distribution, t'_m = (1 - ε)·t_m + ε/C, and

        ℓ_m = -Σ_c t'_mc · log softmax(z_m)_c           (ℓ_m = 0 for an index label equal to ignore_index)

    Output, by ``reduction``: "none" gives ℓ, shape (N, d1, ..., dk) (0-d for a single example); "sum" gives Σ_m ℓ_m;
    "mean" (the default) gives Σ_m ℓ_m / K, with K the number of examples not ignored for index labels, and all
    N·d1···dk examples for probability targets (PyTorch's definitions; all examples ignored gives NaN). dtype: the
    logits'.

    Fusing softmax with the log keeps it stable for logits of any magnitude: log softmax is computed with the
    log-sum-exp trick (see :mod:`autograd_lab.ops.softmax`), never as log(exp(z)/Σexp(z)), so nothing overflows and no
    0·log 0 appears. E.g. float32 logits [1e8, 1e8] with label 1 give ln 2.

    Backward, with w_m = dL/dℓ_m (gy, gy/K, or gy_m for "none") and p_m = softmax(z_m):
        dL/dz_m = w_m · (p_m · Σ_c t'_mc - t'_m),
        dL/dt_m = -w_m · (1 - ε) · log p_m for probability targets; 0 for index labels (they are discrete).
    The first is the general form (differentiate -Σ_c t'_c z_c + (Σ_c t'_c)·log Σ_c exp z_c); the classic shortcut
    p - t (Goodfellow et al., *Deep Learning*, §6.2.2.3) is the special case Σ_c t'_mc = 1.

    Args:
        reduction: "mean", "sum" or "none".
        label_smoothing: ε in [0, 1] (Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016, §7).
        ignore_index: an index label that marks an example to leave out (index labels only; default -100).

    Raises:
        ValueError: for an unknown reduction or ε outside [0, 1].
        ShapeError: if logits are 0-d or empty (no example or no class), labels match neither form, or index labels
            are not whole numbers in [0, C) or ``ignore_index`` (names the op, the shapes and the calling line).
    """

    saved = ("_probs", "_log_probs", "_index_labels", "_kept", "_count")

    _probs: np.ndarray
    _log_probs: np.ndarray
    _index_labels: np.ndarray | None
    _kept: np.ndarray | None
    _count: int

    def __init__(self, reduction: str = "mean", label_smoothing: float = 0.0, ignore_index: int = -100) -> None:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"SoftmaxCrossEntropyOp: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"SoftmaxCrossEntropyOp: label_smoothing must be in [0, 1], got {label_smoothing!r}")
        self.reduction = reduction
        self.label_smoothing = float(label_smoothing)
        self.ignore_index = int(ignore_index)

    def forward(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        z, labels = _rows(logits, labels)
        m, c = z.shape
        eps = z.dtype.type(self.label_smoothing)
        # log softmax(z) = z - max - log Σ exp(z - max), the log-sum-exp trick; exp(-large) underflows to 0 harmlessly
        shifted = z - np.maximum.reduce(z, axis=1, keepdims=True)
        with np.errstate(under="ignore"):
            exp = np.exp(shifted)
        total = np.add.reduce(exp, axis=1, keepdims=True)
        self._probs = exp / total
        self._log_probs = log_p = shifted - np.log(total)
        if labels.ndim == 1:  # class indices, one per example
            kept = labels != self.ignore_index
            index = _class_indices(np.where(kept, labels, 0), c)
            self._index_labels, self._kept, self._count = index, kept, int(np.count_nonzero(kept))
            # ℓ = -(1 - ε) log p[label] - (ε/C) Σ_c log p_c, and 0 for an ignored example
            losses = -(1 - eps) * log_p[np.arange(m), index]
            if self.label_smoothing:
                losses -= eps / c * np.add.reduce(log_p, axis=1)
            losses = np.where(kept, losses, 0)
        else:
            self._index_labels, self._kept, self._count = None, None, m
            target = labels.astype(z.dtype, copy=False) * (1 - eps) + eps / c
            with np.errstate(invalid="ignore"):  # 0·(-inf) for a zero target at an underflowed probability
                losses = -np.add.reduce(np.where(target == 0, 0, target * log_p), axis=1)
        return self._reduce(losses, logits)

    def _reduce(self, losses: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.reduction == "none":
            shape = () if logits.ndim == 1 else logits.shape[:1] + logits.shape[2:]
            return (losses + 0.0).reshape(shape).astype(logits.dtype, copy=False)
        total = np.add.reduce(losses)
        if self.reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                total = total / logits.dtype.type(self._count)
        # Adding 0.0 turns a loss of -0.0 (a perfect prediction) into 0.0.
        return np.asarray(total + 0.0, dtype=logits.dtype)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        logits, labels = self.inputs
        m, c = self._probs.shape
        eps = logits.dtype.type(self.label_smoothing)
        # w_m = dL/dℓ_m, as a column
        if self.reduction == "none":
            weight = gy.reshape(m, 1).astype(logits.dtype, copy=False)
        else:
            weight = np.full((m, 1), float(gy) / (self._count if self.reduction == "mean" else 1), logits.dtype)
        g_logits = g_labels = None
        if self.needs_grad(0):
            g = self._probs.copy()  # p·Σt' - t': Σt' = 1 for index labels, which needs no product
            if self._index_labels is None:
                target = labels.astype(logits.dtype, copy=False).reshape(-1, c) if logits.ndim == 1 else \
                    _class_last(labels).astype(logits.dtype, copy=False)
                target = target * (1 - eps) + eps / c
                g *= np.add.reduce(target, axis=1, keepdims=True)
                g -= target
            else:
                if self.label_smoothing:
                    g -= eps / c
                g[np.arange(m), self._index_labels] -= 1 - eps
            g *= weight
            if self._kept is not None:
                g[~self._kept] = 0  # also when every example is ignored and the weight is 1/0
            g_logits = _class_back(g, logits.shape)
        if self.needs_grad(1):
            if self._index_labels is not None:
                g_labels = np.zeros_like(labels)
            else:
                g_labels = _class_back(-(1 - eps) * self._log_probs * weight, labels.shape)
        return [g_logits, g_labels]


def _class_last(a: np.ndarray) -> np.ndarray:
    """(N, C, d1, ..., dk) -> (N·d1···dk, C): the class axis last, one row per example."""
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1]) if a.ndim > 2 else a


def _class_back(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`_class_last`: rows (M, C) back to ``shape`` (class axis 1), as a contiguous array."""
    if len(shape) <= 2:
        return g.reshape(shape)
    n, c, *spatial = shape
    return np.ascontiguousarray(np.moveaxis(g.reshape(n, *spatial, c), -1, 1))


def _rows(logits: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Logits as (M, C) rows and labels as (M,) indices or (M, C) probabilities, after checking the shapes."""
    if logits.ndim == 0 or 0 in logits.shape[:2]:
        raise ValueError(f"logits (N, C) or (N, C, d1, ...) need at least one example and one class, got shape "
                         f"{logits.shape}")
    if logits.ndim == 1:
        if labels.shape in ((), (1,)):
            return logits[None], labels.reshape(1)
        if labels.shape == logits.shape:
            return logits[None], labels[None]
    elif labels.shape == logits.shape:
        return _class_last(logits), _class_last(labels)
    elif labels.shape == logits.shape[:1] + logits.shape[2:]:
        return _class_last(logits), labels.reshape(-1)
    index_shape = () if logits.ndim == 1 else logits.shape[:1] + logits.shape[2:]
    raise ValueError(f"labels must have shape {index_shape} (class indices) or {logits.shape} (probabilities), "
                     f"got {labels.shape}")


def _class_indices(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """``labels`` as integer indices, if every label is a whole number in [0, n_classes).

    Raises:
        ValueError: naming the first bad label.
    """
    with np.errstate(invalid="ignore"):
        index = labels.astype(np.intp)  # NaN or a huge value casts to garbage: the comparison below refuses it
    if np.array_equal(index, labels) and (index.size == 0 or (index.min() >= 0 and index.max() < n_classes)):
        return index
    with np.errstate(invalid="ignore"):
        valid = (labels >= 0) & (labels < n_classes) & (np.floor(labels) == labels)
    bad = int(np.flatnonzero(~valid)[0])
    raise ValueError(f"index labels must be whole numbers in [0, {n_classes}); labels[{bad}] = {labels[bad]} "
                     "(or equal to ignore_index, to leave the example out)")


class MSELossOp(Operator):
    """Mean squared error ``L = (1/K) Σ (a - b)²`` over all K elements: ``MSELossOp()(prediction, target)``.

    Both inputs must have the same shape (no broadcasting: an (N, 1) prediction against an (N,) target would silently
    broadcast to (N, N), a classic bug). Output: 0-d, dtype of the promoted inputs; an empty pair (K = 0) gives NaN,
    the 0/0 of the definition, as PyTorch and :class:`~autograd_lab.ops.MeanOp` give (not a silent 0).
    Backward: dL/da = 2(a - b)/K, dL/db = -2(a - b)/K.

    Raises:
        ShapeError: if the shapes differ.
    """

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.shape != b.shape:
            raise ValueError(f"prediction and target must have the same shape, got {a.shape} and {b.shape}")
        d = a - b
        with np.errstate(invalid="ignore"):
            return np.asarray(np.vdot(d, d) / d.dtype.type(d.size), dtype=d.dtype)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        if not a.size:
            return [np.zeros_like(a) if self.needs_grad(0) else None, np.zeros_like(b) if self.needs_grad(1) else None]
        g = (a - b) * (2 * gy / a.size)
        return [g if self.needs_grad(0) else None, -g if self.needs_grad(1) else None]
