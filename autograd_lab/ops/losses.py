"""Loss functions: fused softmax cross-entropy and mean squared error. Each returns a 0-d (scalar) Variable."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


class SoftmaxCrossEntropyOp(Operator):
    """Mean cross-entropy of softmax(logits) against labels: ``SoftmaxCrossEntropyOp()(logits, labels)``.

    Inputs:
        logits: (N, C), float32 or float64. A single example may be given as (C,), with a 0-d or (1,) class index or
            (C,) probabilities; it is treated as N = 1.
        labels: either (N,) class indices, integer-valued and in [0, C) (a Variable holds them as floats, so they are
            checked to be whole numbers), or (N, C) target probabilities (one-hot rows, or any rows summing to 1).

    Output: a 0-d array of the logits' dtype,
        L = -(1/N) Σ_n Σ_c t_nc · log softmax(z_n)_c,   with t the one-hot rows for index labels.

    Fusing softmax with the log keeps it stable for logits of any magnitude: log softmax is computed with the
    log-sum-exp trick (see :mod:`autograd_lab.ops.softmax`), never as log(exp(z)/Σexp(z)), so nothing overflows and no
    0·log 0 appears. E.g. float32 logits [1e8, 1e8] with label 1 give ln 2.

    Backward (the classic fused form, e.g. Goodfellow et al., *Deep Learning*, §6.2.2.3):
        dL/dz = (softmax(z) - t) / N,
        dL/dt = -log softmax(z) / N for probability targets; 0 for index labels (they are discrete).

    Raises:
        ShapeError: if logits are not 1-D or 2-D, are empty (no example or no class), labels do not match them, or
            index labels are not whole numbers in [0, C) (names the op, the shapes and the calling line).
    """

    saved = ("_exp", "_total", "_rows", "_index_labels", "_log_probs")

    _exp: np.ndarray
    _total: np.ndarray
    _rows: np.ndarray
    _log_probs: np.ndarray | None
    _index_labels: np.ndarray | None

    def forward(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        if logits.ndim == 1:
            logits = logits[None]
            labels = labels.reshape(1) if labels.shape in ((), (1,)) else labels[None]
        if logits.ndim != 2:
            raise ValueError(f"logits must have shape (N, C), got {logits.shape}")
        n, c = logits.shape
        if n == 0 or c == 0:
            raise ValueError(f"logits must have at least one example and one class, got shape {logits.shape}")
        # log softmax(z) = z - m - log Σ exp(z - m) with m the row maximum (the log-sum-exp trick). The ufuncs'
        # reduce methods are called directly: ndarray.max/.sum add a Python-level wrapper around the same call.
        shifted = logits - np.maximum.reduce(logits, axis=1, keepdims=True)
        index = None
        with np.errstate(under="ignore", invalid="ignore"):  # exp(-large) underflows to 0, which is exact enough
            exp = np.exp(shifted)
            if labels.shape == (n,):
                index = labels.astype(np.intp)  # NaN or a huge value casts to garbage; _class_indices refuses it
        total = np.add.reduce(exp, axis=1, keepdims=True)
        # softmax(z) = exp / total is needed only for the gradient, so backward forms it (into its own array).
        self._exp, self._total = exp, total
        log_total = np.log(total)
        if index is not None:
            self._rows = rows = np.arange(n)
            self._index_labels = index = _class_indices(index, labels, c)
            self._log_probs = None
            # -log p[label] = log Σ exp(z - m) - (z - m)[label], summed over the batch
            loss = np.add.reduce(log_total[:, 0] - shifted[rows, index]) / n
        elif labels.shape == (n, c):
            self._index_labels = None
            self._log_probs = log_p = shifted - log_total
            loss = -np.add.reduce(labels * log_p, axis=None) / n
        else:
            raise ValueError(f"labels must have shape ({n},) (class indices) or ({n}, {c}) (probabilities)")
        # Adding 0.0 turns a loss of -0.0 (a perfect prediction) into 0.0.
        return np.asarray(loss + 0.0, dtype=logits.dtype)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        logits, labels = self.inputs
        n = self._exp.shape[0]
        # The loss is 0-d, so gy is one number. Divided as a Python float (binary64) and then rounded to the logits'
        # dtype, it gives the same bits as dividing in that dtype (double rounding is innocuous for division).
        scale = float(gy) / n
        g_logits = g_labels = None
        if self.needs_grad(0):
            g_logits = self._exp / self._total  # softmax(z), a fresh array the gradient is built in
            if self._index_labels is None:
                g_logits -= labels.reshape(g_logits.shape).astype(logits.dtype, copy=False)
            else:
                g_logits[self._rows, self._index_labels] -= 1
            g_logits *= scale
            if logits.ndim == 1:
                g_logits = g_logits.reshape(logits.shape)
        if self.needs_grad(1):
            if self._index_labels is not None:
                g_labels = np.zeros_like(labels)
            else:
                assert self._log_probs is not None
                g_labels = (-self._log_probs * scale).reshape(labels.shape)
        return [g_logits, g_labels]


def _class_indices(index: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Return ``index`` (``labels`` cast to integers) if every label is a whole number in [0, n_classes).

    One comparison finds labels that are not whole numbers (NaN included: it equals nothing); viewing the indices as
    unsigned turns a negative one into a huge one, so the largest of them covers both ends of the range. (The ufuncs'
    reduce methods are called directly: ``np.count_nonzero`` and ``ndarray.any`` add Python-level wrappers.)

    Raises:
        ValueError: naming the first bad label.
    """
    if not np.logical_or.reduce(index != labels) and np.maximum.reduce(index.view(np.uintp)) < n_classes:
        return index
    valid = (labels >= 0) & (labels < n_classes) & (np.floor(labels) == labels)
    bad = int(np.flatnonzero(~valid)[0])
    raise ValueError(f"index labels must be whole numbers in [0, {n_classes}); labels[{bad}] = {labels[bad]}")


class MSELossOp(Operator):
    """Mean squared error ``L = (1/K) Σ (a - b)²`` over all K elements: ``MSELossOp()(prediction, target)``.

    Both inputs must have the same shape (no broadcasting: an (N, 1) prediction against an (N,) target would silently
    broadcast to (N, N), a classic bug). Output: 0-d, dtype of the promoted inputs.
    Backward: dL/da = 2(a - b)/K, dL/db = -2(a - b)/K.

    Raises:
        ShapeError: if the shapes differ.
    """

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.shape != b.shape:
            raise ValueError(f"prediction and target must have the same shape, got {a.shape} and {b.shape}")
        d = a - b
        return np.asarray(np.vdot(d, d) / max(d.size, 1), dtype=d.dtype)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        g = (a - b) * (2 * gy / max(a.size, 1))
        return [g if self.needs_grad(0) else None, -g if self.needs_grad(1) else None]
