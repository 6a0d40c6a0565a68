"""The gradient of NumPy broadcasting: sum a gradient back down to an input's shape."""

from __future__ import annotations

import numpy as np


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reduce ``grad`` to ``shape`` by summing over the axes that broadcasting created or stretched.

    Broadcasting copies an input along new leading axes and along axes of length 1, so the chain rule adds up the
    gradient over every copy (NumPy manual, "Broadcasting"). Example: ``X (4, 3) + b (3,)`` sends ``grad.sum(0)`` to b.

    Args:
        grad: the gradient of the broadcast result, shape ``np.broadcast_shapes(shape, ...)``.
        shape: the input's shape.

    Returns:
        An array of exactly ``shape`` (``grad`` itself when nothing was broadcast).
    """
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    if lead:
        # Summing the new leading axes away gives a fresh array (no reshape view, which the engine would copy).
        grad = np.add.reduce(grad, axis=0 if lead == 1 else tuple(range(lead)))  # ufunc method: no wrapper
        if not shape:
            return np.asarray(grad)  # a full reduction gives a NumPy scalar
        if grad.shape == shape:
            return grad  # the usual bias case, (N, F) -> (F,): nothing was stretched
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = np.add.reduce(grad, axis=stretched, keepdims=True)
    return grad
