"""Gradient clipping: by the global norm of all gradients, or parameter by parameter."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from autograd_lab.optim.optimizer import check_parameters
from autograd_lab.variable import Parameter


def clip_grad_norm(params: Iterable[Parameter], max_norm: float) -> float:
    """Scale all gradients together so that their global L2 norm is at most ``max_norm``; return the norm before.

    The global norm is ‖g‖ = √(Σ_p Σ_i g_pi²) over every parameter's gradient (parameters without one are skipped).
    If ‖g‖ > max_norm, every gradient is multiplied in place by max_norm/‖g‖, which keeps the direction of the whole
    update (Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent neural networks", ICML 2013, Alg. 1).
    Example: gradients [3, 0] and [0, 4] have norm 5; with max_norm 1 they become [0.6, 0] and [0, 0.8].

    Args:
        params: Parameters (e.g. ``model.parameters()``).
        max_norm: positive threshold.

    Returns:
        The global norm before clipping, as a Python float (useful to log).

    Raises:
        TypeError: for a non-Parameter in ``params``.
        ValueError: for max_norm ≤ 0.
        FloatingPointError: if a gradient holds NaN or inf (names the parameter); gradients are left unchanged.
    """
    params = check_parameters(params, "clip_grad_norm")
    if not max_norm > 0:
        raise ValueError(f"clip_grad_norm: max_norm must be positive, got {max_norm!r}")
    grads = [(p, p.grad) for p in params if p.grad is not None]
    total = math.hypot(*(l2_norm(g) for _, g in grads))
    if not math.isfinite(total):
        bad = next(p for p, g in grads if not np.isfinite(g).all())
        raise FloatingPointError(
            f"clip_grad_norm: the gradient of {bad.name or 'a parameter'} (shape {bad.shape}) holds NaN or inf; "
            "lower the learning rate, or run under detect_anomaly() to find the op that produced it"
        )
    if total > max_norm:
        scale = max_norm / total
        for _, g in grads:
            g *= scale
    return total


def l2_norm(g: np.ndarray) -> float:
    """The L2 norm of an array as a Python float, without overflow for large finite values (NaN/inf give inf or NaN).

    The fast path is √(g·g) in g's own dtype; if that overflows (float32 squares pass 3.4e38 already for entries
    near 1e19), the norm is recomputed as m·‖g/m‖ in float64 with m = max|g|.
    """
    squared = float(np.vdot(g, g))
    if math.isfinite(squared):
        return math.sqrt(squared)
    if not np.isfinite(g).all():
        return squared
    m = float(np.abs(g).max())
    scaled = g.astype(np.float64) / m
    return m * math.sqrt(float(np.vdot(scaled, scaled)))


def clip_norm_(grad: np.ndarray, max_norm: float) -> None:
    """Scale one gradient in place so its own L2 norm is at most ``max_norm`` (the seed article's SimpleSGD rule)."""
    norm = l2_norm(grad)
    if norm > max_norm:
        grad *= max_norm / norm
