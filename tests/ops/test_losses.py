"""SoftmaxCrossEntropyOp and MSELossOp: the issue's cases, stability, label checks, gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import LogSoftmaxOp, MSELossOp, SoftmaxCrossEntropyOp

RNG = np.random.default_rng(3)


def ce(logits, labels, dtype=np.float64):
    z = Variable.from_numpy(np.asarray(logits, dtype=dtype))
    t = Variable.from_numpy(labels)
    loss = SoftmaxCrossEntropyOp()(z, t)
    Engine.backward(loss)
    return loss, z.grad


@pytest.mark.parametrize(
    ("logits", "loss", "grad"),
    [
        ([1000.0, 0.0], 0.0, [0.0, 0.0]),
        ([0.0, 1000.0], 1000.0, [-1.0, 1.0]),
        ([-431.0, 279.0, 427.0], 858.0, None),
    ],
)
def test_issue_case_cross_entropy_with_label_0_is_exact_and_never_nan(logits, loss, grad):
    """Label 0: loss = logsumexp(z) - z_0; e.g. [0, 1000] gives 1000 + log(1 + e^-1000) = 1000."""
    with np.errstate(all="raise"):
        value, g = ce([logits], [0])
    assert value.item() == loss
    if grad is not None:
        np.testing.assert_array_equal(g, [grad])
    assert not np.isnan(value.data) and not np.isnan(g).any()


def test_issue_case_float32_logits_1e8_1e8_label_1_give_ln2():
    """From issue 3: in float32, exp(1e8) overflows, so only the max-subtracted form gives ln 2 and [0.5, -0.5]."""
    with np.errstate(all="raise"):
        loss, g = ce(np.array([[1e8, 1e8]], dtype=np.float32), [1], dtype=np.float32)
    assert loss.dtype == np.float32 and g.dtype == np.float32
    assert loss.item() == pytest.approx(math.log(2), rel=1e-6)
    np.testing.assert_allclose(g, [[0.5, -0.5]], rtol=1e-6)


def test_cross_entropy_matches_the_definition_and_is_the_mean_over_the_batch():
    z = RNG.standard_normal((4, 3))
    labels = np.array([0, 2, 1, 2])
    loss, g = ce(z, labels)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    assert loss.item() == pytest.approx(-logp[np.arange(4), labels].mean(), rel=1e-14)
    onehot = np.eye(3)[labels]
    np.testing.assert_allclose(g, (np.exp(logp) - onehot) / 4, rtol=1e-13)


def test_one_hot_labels_give_the_same_loss_and_gradient_as_indices():
    z = RNG.standard_normal((5, 4))
    labels = np.array([3, 0, 1, 1, 2])
    loss_i, g_i = ce(z, labels)
    loss_h, g_h = ce(z, np.eye(4)[labels])
    assert loss_h.item() == pytest.approx(loss_i.item(), rel=1e-14)
    np.testing.assert_allclose(g_h, g_i, rtol=1e-14)


def test_index_labels_may_be_given_as_integers_or_whole_floats():
    z = RNG.standard_normal((2, 3))
    assert ce(z, np.array([1, 2]))[0].item() == ce(z, np.array([1.0, 2.0]))[0].item()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cross_entropy_gradient_matches_central_differences(dtype):
    z = (3 * RNG.standard_normal((4, 5))).astype(dtype)
    check_operator(SoftmaxCrossEntropyOp, z, np.array([0, 4, 2, 2]), wrt=[0])


def test_cross_entropy_with_probability_targets_has_gradients_for_both_inputs():
    z = RNG.standard_normal((3, 4))
    t = RNG.dirichlet(np.ones(4), size=3)
    check_operator(SoftmaxCrossEntropyOp, z, t)


def test_cross_entropy_equals_minus_mean_of_picked_log_softmax():
    """An independent route through the library: LogSoftmaxOp, then pick and average by hand."""
    z = 50 * RNG.standard_normal((6, 10))
    labels = RNG.integers(0, 10, size=6)
    logp = LogSoftmaxOp()(Variable.from_numpy(z)).data
    assert ce(z, labels)[0].item() == pytest.approx(-logp[np.arange(6), labels].mean(), rel=1e-13)


def test_labels_have_no_gradient_for_index_labels():
    z = Variable.from_numpy(RNG.standard_normal((2, 3)))
    t = Variable.from_numpy([0, 1])
    Engine.backward(SoftmaxCrossEntropyOp()(z, t))
    np.testing.assert_array_equal(t.grad, [0.0, 0.0])


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([0, 3], r"whole numbers in \[0, 3\); labels\[1\] = 3"),
        ([-1, 0], r"labels\[0\] = -1"),
        ([0.5, 1], r"labels\[0\] = 0.5"),
        ([np.nan, 1], r"labels\[0\] = nan"),
        ([1, np.inf], r"labels\[1\] = inf"),
        ([1, -np.inf], r"labels\[1\] = -inf"),
        ([1e20, 0], r"labels\[0\] = 1e\+20"),
        ([0, -1e20], r"labels\[1\] = -1e\+20"),
        ([2, 2.0**64], r"labels\[1\] = 1.8446"),  # 2^64: cast to an unsigned integer, it could wrap to 0
        ([1, -2.0**63], r"labels\[1\] = -9.22"),  # the most negative int64: negative, however it is cast
        ([0, 2.0000001], r"labels\[1\] = 2.0000001"),
        ([0, 1, 2], r"labels must have shape \(2,\)"),
    ],
)
def test_bad_labels_raise_a_clear_error(labels, message):
    z = Variable.from_numpy(np.zeros((2, 3)))
    # Under errstate(all="raise") a bad label must still give the clear error, not a FloatingPointError from a cast.
    with np.errstate(all="raise"), pytest.raises(ShapeError, match=message) as info:
        SoftmaxCrossEntropyOp()(z, Variable.from_numpy(labels))
    assert "SoftmaxCrossEntropyOp" in str(info.value) and __file__ in str(info.value)


def test_largest_and_smallest_valid_labels_are_accepted_and_picked():
    z = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    loss = SoftmaxCrossEntropyOp()(Variable.from_numpy(z), Variable.from_numpy(np.array([2.0, -0.0])))
    expected = np.mean([np.log(np.exp(z[0]).sum()) - 2.0, np.log(np.exp(z[1]).sum()) - 3.0])
    assert float(loss.data) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "label", [np.array(1), np.array([1]), np.array([0.0, 1.0, 0.0])], ids=["0-d", "(1,)", "one-hot"]
)
def test_a_single_example_may_be_given_as_1d_logits(label):
    z = RNG.standard_normal(3)
    loss_1d, g_1d = ce(z, label)
    loss_2d, g_2d = ce(z[None], label.reshape(1, -1) if label.size == 3 else label.reshape(1))
    assert loss_1d.item() == loss_2d.item() and g_1d.shape == (3,)
    np.testing.assert_array_equal(g_1d, g_2d[0])
    check_operator(SoftmaxCrossEntropyOp, z, label, wrt=[0])


def test_logits_with_a_spatial_axis_need_one_label_per_position():
    """(N, C, d1) logits take (N, d1) index labels or (N, C, d1) probabilities, as F.cross_entropy does."""
    with pytest.raises(ShapeError, match=r"labels must have shape \(1, 3\) \(class indices\) or \(1, 2, 3\)"):
        SoftmaxCrossEntropyOp()(Variable.from_numpy(np.zeros((1, 2, 3))), Variable.from_numpy([0]))


def test_mse_value_and_gradient():
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    loss = MSELossOp()(Variable.from_numpy(a), Variable.from_numpy(b))
    assert loss.shape == () and loss.item() == pytest.approx(np.mean((a - b) ** 2), rel=1e-14)
    check_operator(MSELossOp, a, b)


def test_mse_float32():
    a = RNG.standard_normal(5).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    check_operator(MSELossOp, a, b)


def test_mse_refuses_to_broadcast():
    with pytest.raises(ShapeError, match=r"same shape, got \(4, 1\) and \(4,\)"):
        MSELossOp()(Variable.from_numpy(np.zeros((4, 1))), Variable.from_numpy(np.zeros(4)))


@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
def test_an_empty_batch_or_no_class_is_refused_not_a_nan_loss(shape):
    """Found in review: a (0, 3) batch gave a NaN loss with a divide warning instead of an error."""
    labels = np.zeros(shape[0])
    with pytest.raises(ShapeError, match=rf"at least one example and one class, got shape \({shape[0]}, {shape[1]}\)"):
        SoftmaxCrossEntropyOp()(Variable.from_numpy(np.zeros(shape)), Variable.from_numpy(labels))
