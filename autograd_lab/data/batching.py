"""Mini-batches for training: shuffle once per epoch with a seeded generator, then slice.

Two runs that start from the same seed see the same batches in the same order, which is what makes a training run
reproducible bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def _check(x: np.ndarray, y: np.ndarray, batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if np.ndim(x) < 1 or np.ndim(y) < 1 or len(x) != len(y):
        raise ValueError(f"x and y must have the same number of rows, got shapes {np.shape(x)} and {np.shape(y)}")


def iterate_minibatches(x: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator | None = None,
                        shuffle: bool = True, drop_last: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(x_batch, y_batch)`` pairs covering the data once (one epoch).

    Args:
        x: shape (N, ...), any dtype.
        y: shape (N, ...), row i labels x[i].
        batch_size: rows per batch; the last batch is smaller when N is not a multiple, unless ``drop_last``.
        rng: draws the epoch's permutation (one ``rng.permutation(N)`` call); required when ``shuffle``.
        shuffle: visit rows in a random order; False keeps 0..N-1.
        drop_last: skip a final batch smaller than ``batch_size``.

    Yields:
        ``x[idx]`` and ``y[idx]`` (copies) for consecutive slices ``idx`` of the order.

    Raises:
        ValueError: when batch_size is not a positive integer, x and y differ in length, or shuffle is asked
            without an rng.
    """
    _check(x, y, batch_size)
    n = len(x)
    if shuffle:
        if rng is None:
            raise ValueError("shuffle=True needs rng, e.g. np.random.default_rng(seed)")
        order = rng.permutation(n)
    else:
        order = np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


class DataLoader:
    """Reusable mini-batch source: each ``iter()`` is one epoch with a fresh permutation from one seeded generator.

    Args:
        x: shape (N, ...); y: shape (N, ...).
        batch_size: rows per batch.
        shuffle: new random order each epoch (drawn from ``np.random.default_rng(seed)``).
        seed: seed of the generator; the same seed gives the same sequence of epochs.
        drop_last: skip a final short batch.

    Raises:
        ValueError: as ``iterate_minibatches``.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, batch_size: int, *, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        _check(x, y, batch_size)
        self.x, self.y = x, y
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        """Batches per epoch."""
        n = len(self.x)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return iterate_minibatches(self.x, self.y, self.batch_size, self.rng, self.shuffle, self.drop_last)
