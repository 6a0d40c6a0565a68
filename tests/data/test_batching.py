"""Mini-batches: every row once per epoch, reproducible from a seed."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.data import DataLoader, iterate_minibatches

X = np.arange(10, dtype=np.float32).reshape(10, 1)
Y = np.arange(10)


def rows_seen(batches):
    return np.concatenate([yb for _, yb in batches])


def test_each_row_once_per_epoch_and_pairs_kept():
    batches = list(iterate_minibatches(X, Y, 3, np.random.default_rng(0)))
    assert [len(yb) for _, yb in batches] == [3, 3, 3, 1]
    assert sorted(rows_seen(batches).tolist()) == list(range(10))
    for xb, yb in batches:
        np.testing.assert_array_equal(xb[:, 0], yb)


def test_order_is_the_generators_permutation():
    expected = np.random.default_rng(7).permutation(10)
    np.testing.assert_array_equal(rows_seen(iterate_minibatches(X, Y, 4, np.random.default_rng(7))), expected)


def test_no_shuffle_keeps_order():
    np.testing.assert_array_equal(rows_seen(iterate_minibatches(X, Y, 4, shuffle=False)), np.arange(10))


def test_drop_last():
    batches = list(iterate_minibatches(X, Y, 4, shuffle=False, drop_last=True))
    assert [yb.tolist() for _, yb in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_loader_same_seed_same_epochs():
    first, second = DataLoader(X, Y, 4, seed=3), DataLoader(X, Y, 4, seed=3)
    for _ in range(3):
        np.testing.assert_array_equal(rows_seen(first), rows_seen(second))


def test_loader_epochs_differ():
    loader = DataLoader(X, Y, 4, seed=3)
    assert rows_seen(loader).tolist() != rows_seen(loader).tolist()


@pytest.mark.parametrize(("drop_last", "batches"), [(False, 3), (True, 2)])
def test_loader_len(drop_last, batches):
    loader = DataLoader(X, Y, 4, drop_last=drop_last)
    assert len(loader) == batches == len(list(loader))


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, True])
def test_bad_batch_size(batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        list(iterate_minibatches(X, Y, batch_size, shuffle=False))


def test_length_mismatch():
    with pytest.raises(ValueError, match=r"same number of rows, got shapes \(10, 1\) and \(9,\)"):
        DataLoader(X, Y[:9], 2)


def test_shuffle_needs_rng():
    with pytest.raises(ValueError, match="shuffle=True needs rng"):
        list(iterate_minibatches(X, Y, 2))
