"""Data augmentation for 28x28 images: random translations.

A digit moved by a pixel or two is still the same digit, so showing the network shifted copies teaches it that
position does not matter: a classic, cheap regulariser for MNIST (Simard, Steinkraus & Platt, "Best Practices for
Convolutional Neural Networks Applied to Visual Document Analysis", ICDAR 2003, use elastic and affine distortions;
shifts are the simplest case). With only the 8,000 bundled training images it is what lifts a small MLP clearly
above 95% held-out accuracy.
"""

from __future__ import annotations

import numpy as np

SIDE = 28


def random_shift(x: np.ndarray, rng: np.random.Generator, max_shift: int = 2) -> np.ndarray:
    """Move each image by its own random offset of up to ``max_shift`` pixels along each axis, filling with 0.

    Args:
        x: (N, 784) float images, rows are 28x28 row-major.
        rng: draws the offsets, two integers in [-max_shift, max_shift] per image.
        max_shift: ≥ 0; 0 returns ``x`` unchanged.

    Returns:
        A new (N, 784) array of x's dtype (or ``x`` itself when max_shift is 0).

    Raises:
        ValueError: if x is not (N, 784) or max_shift is negative.
    """
    if x.ndim != 2 or x.shape[1] != SIDE * SIDE:
        raise ValueError(f"random_shift expects (N, {SIDE * SIDE}) images, got {x.shape}")
    if max_shift < 0:
        raise ValueError(f"random_shift: max_shift must be ≥ 0, got {max_shift}")
    if max_shift == 0:
        return x
    n, s = len(x), max_shift
    padded = np.zeros((n, SIDE + 2 * s, SIDE + 2 * s), dtype=x.dtype)
    padded[:, s:s + SIDE, s:s + SIDE] = x.reshape(n, SIDE, SIDE)
    # A window of 28x28 starting at (dy, dx) in [0, 2s]: the image moved by (s - dy, s - dx).
    rows = rng.integers(0, 2 * s + 1, n)[:, None] + np.arange(SIDE)
    cols = rng.integers(0, 2 * s + 1, n)[:, None] + np.arange(SIDE)
    out = np.empty((n, SIDE * SIDE), dtype=x.dtype)  # owns its memory, so the trainer can wrap it without a copy
    out.reshape(n, SIDE, SIDE)[...] = padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]
    return out
