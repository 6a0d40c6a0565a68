"""Matrix multiplication."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops._broadcast import sum_to_shape


class MatMulOp(Operator):
    """``op(a) @ op(b)`` with ``np.matmul`` semantics, where op transposes the last two axes when its flag is set.

    Shapes: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes broadcast; a 1-D operand is a vector as in
    ``np.matmul``. The transpose flags apply to operands with at least 2 dimensions.

    Gradients (for y = A B): dA = gy Bᵀ, dB = Aᵀ gy (e.g. Goodfellow, Bengio & Courville, *Deep Learning*, §6.5.6);
    with a transposed operand the same products are taken and transposed back.
    """

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False) -> None:
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``op(a) @ op(b)``.

        Raises:
            ValueError: if the inner dimensions disagree (naming both, and the transpose flag that would fit) or the
                batch axes do not broadcast; ``Operator.__call__`` turns it into a ShapeError with the calling line.
        """
        try:
            return np.matmul(_t(a) if self.transpose_a else a, _t(b) if self.transpose_b else b)
        except ValueError as exc:
            raise ValueError(_mismatch_message(a, b, self.transpose_a, self.transpose_b) or str(exc)) from exc

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        ta, tb = self.transpose_a, self.transpose_b
        if a.ndim == 2 and b.ndim == 2:  # the common case, without the promotions and reductions below
            return _matrix_grads(a, b, gy, ta, tb, self.needs_grad(0), self.needs_grad(1))
        A = _t(a) if ta else a
        B = _t(b) if tb else b
        # Promote 1-D operands to matrices so that one rule covers every case, then undo it.
        A2 = A[None, :] if A.ndim == 1 else A
        B2 = B[:, None] if B.ndim == 1 else B
        g2 = gy[..., None] if B.ndim == 1 else gy
        g2 = g2[..., None, :] if A.ndim == 1 else g2
        ga = gb = None
        # A transposed operand's gradient is computed directly in its stored layout, e.g. for y = A bᵀ,
        # db = (Aᵀ gy)ᵀ = gyᵀ A: the result is contiguous, where transposing back would give a strided view that
        # the engine must copy before an optimizer may update it in place (a 784x128 copy per step in an MLP).
        if self.needs_grad(0):
            if ta and a.ndim >= 2:
                ga = sum_to_shape(np.matmul(B2, _t(g2)), a.shape)
            else:
                gA = np.matmul(g2, _t(B2))
                if A.ndim == 1:
                    gA = gA[..., 0, :]
                ga = sum_to_shape(gA, A.shape)
        if self.needs_grad(1):
            if tb and b.ndim >= 2:
                gb = sum_to_shape(np.matmul(_t(g2), A2), b.shape)
            else:
                gB = np.matmul(_t(A2), g2)
                if B.ndim == 1:
                    gB = gB[..., :, 0]
                gb = sum_to_shape(gB, B.shape)
        return [ga, gb]


def _matrix_grads(a: np.ndarray, b: np.ndarray, gy: np.ndarray, ta: bool, tb: bool, need_a: bool, need_b: bool
                  ) -> list[np.ndarray | None]:
    """:meth:`MatMulOp.backward` for two matrices: the same rule (dA = gy Bᵀ, dB = Aᵀ gy), each product taken
    directly in the stored layout (for y = A bᵀ, db = (Aᵀ gy)ᵀ = gyᵀ A; for y = aᵀ B, da = (gy Bᵀ)ᵀ = B gyᵀ), with
    the same BLAS calls as the general path, so the same bits; it saves the general path's Python work (1-D
    promotions, broadcasting reductions), which is a few percent of a small LSTM step."""
    ga = gb = None
    if need_a:
        ga = (b.T if tb else b) @ gy.T if ta else gy @ (b if tb else b.T)
    if need_b:
        gb = gy.T @ (a.T if ta else a) if tb else (a if ta else a.T) @ gy
    return [ga, gb]


def _inner(shape: tuple[int, ...], transposed: bool, left: bool) -> int:
    """The contracted length of an operand: the last axis of the left one, the second-to-last of the right one
    (its only axis if 1-D); ``transposed`` swaps the last two axes first."""
    if len(shape) == 1:
        return shape[0]
    if left:
        return shape[-2] if transposed else shape[-1]
    return shape[-1] if transposed else shape[-2]


def _mismatch_message(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool) -> str | None:
    """Plain words for why ``op(a) @ op(b)`` failed, or None when no simple reason is found."""
    if a.ndim == 0 or b.ndim == 0:
        return "MatMulOp needs operands with at least one axis, got a 0-d array"
    ka, kb = _inner(a.shape, ta, True), _inner(b.shape, tb, False)
    if ka == kb:
        if a.ndim > 2 and b.ndim > 2:
            return f"the batch axes {a.shape[:-2]} and {b.shape[:-2]} do not broadcast"
        return None
    side_a = "aᵀ" if ta and a.ndim >= 2 else "a"
    side_b = "bᵀ" if tb and b.ndim >= 2 else "b"
    text = (f"inner dimensions disagree: {side_a} @ {side_b} needs the length of {side_a}'s last axis ({ka}) to "
            f"equal the length of {side_b}'s {'only' if b.ndim == 1 else 'second-to-last'} axis ({kb})")
    fits = []  # flag changes under which the inner dimensions would agree
    for new_ta, new_tb in ((ta, not tb), (not ta, tb), (not ta, not tb)):
        if (new_ta != ta and a.ndim < 2) or (new_tb != tb and b.ndim < 2):
            continue
        if _inner(a.shape, new_ta, True) == _inner(b.shape, new_tb, False):
            fits.append(", ".join(f"{name}={value}" for name, value, old in
                                  (("transpose_a", new_ta, ta), ("transpose_b", new_tb, tb)) if value != old))
    if fits:
        text += f"; MatMulOp({fits[0]}) would fit"
    return text


def _t(x: np.ndarray) -> np.ndarray:
    """Swap the last two axes (a view); vectors are left alone. (The method is ~4x cheaper than np.swapaxes.)"""
    return x if x.ndim < 2 else x.swapaxes(-1, -2)
