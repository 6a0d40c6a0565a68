"""The differential suite of issue 22: the peers' own operator tests, ported, against PyTorch.

Every case of ``cases_*.py`` runs in float32 (the peer's tolerance) and float64 (1e-6), comparing the forward value
and every input's gradient with PyTorch, and with central differences in float64 where the peer checked gradients
numerically (DeZero) or PyTorch has no counterpart. A case for an option the library lacks is a strict expected
failure naming the option. The module is skipped, with the reason, where PyTorch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the differential suite compares with PyTorch (pip install -e '.[torch]')")

from autograd_lab import Engine, ShapeError, Variable  # noqa: E402
from autograd_lab import nn as N  # noqa: E402
from autograd_lab import ops as O  # noqa: E402

from . import cases_dezero, cases_micrograd, cases_needle, cases_tinygrad  # noqa: E402
from .harness import params, run  # noqa: E402

F = torch.nn.functional
ALL = cases_tinygrad.CASES + cases_needle.CASES + cases_dezero.CASES + cases_micrograd.CASES


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")  # torch.var/std, as tinygrad does
@pytest.mark.parametrize(("case", "dtype"), params(ALL))
def test_value_and_every_gradient_match_pytorch(case, dtype):
    run(case, dtype, torch)


@pytest.mark.parametrize(("spec", "options"), cases_tinygrad.RETURN_INDICES,
                         ids=[str(o) for _, o in cases_tinygrad.RETURN_INDICES])
def test_tinygrad_max_pool2d_return_indices_are_pytorchs(spec, options):
    """tinygrad:test_max_pool2d_return_indices: the argmax positions row·W + column, ties and overlaps included."""
    x = np.random.default_rng(5).uniform(-2, 2, spec) if isinstance(spec, tuple) else spec
    y, indices = N.MaxPool2d(**options, return_indices=True)(Variable.from_numpy(x))
    expected_y, expected = F.max_pool2d(torch.tensor(x), **options, return_indices=True)
    np.testing.assert_array_equal(y.data, expected_y.numpy())
    np.testing.assert_array_equal(indices, expected.numpy())
    assert indices.dtype == np.int64


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("track", [True, False])
def test_tinygrad_batchnorm2d_running_statistics_follow_pytorch_over_three_batches(momentum, track):
    """tinygrad:test_nn.test_batchnorm2d_training (running statistics after training batches), with PyTorch's
    momentum=None (cumulative average) and track_running_stats=False, then one evaluation batch."""
    rng = np.random.default_rng(9)
    ours = N.BatchNorm2d(8, momentum=momentum, track_running_stats=track, dtype=np.float64)
    theirs = torch.nn.BatchNorm2d(8, momentum=momentum, track_running_stats=track).double()
    for _ in range(3):
        x = rng.standard_normal((2, 8, 3, 3))
        np.testing.assert_allclose(ours(Variable.from_numpy(x)).data, theirs(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
    if track:
        np.testing.assert_allclose(ours.stats.mean, theirs.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.stats.var, theirs.running_var.numpy(), rtol=1e-12)
    else:
        assert ours.stats is None and theirs.running_mean is None
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((2, 8, 3, 3))
    np.testing.assert_allclose(ours(Variable.from_numpy(x)).data, theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def test_tinygrad_conv2d_same_padding_invalid_stride_and_padding_string_are_refused():
    """tinygrad:test_nn.test_conv2d_same_padding_invalid_stride / _invalid_padding_str."""
    with pytest.raises(ValueError, match=r"padding='same' needs stride 1"):
        N.Conv2d(16, 32, kernel_size=2, stride=2, padding="same")
    with pytest.raises(ValueError, match=r"'same' or 'valid', got 'not_same'"):
        N.Conv2d(16, 32, kernel_size=2, stride=1, padding="not_same")


def test_tinygrad_cross_entropy_reduction_typo_is_refused():
    """tinygrad:test_cross_entropy_reductions: reduction="typo" raises ValueError."""
    with pytest.raises(ValueError, match=r"reduction must be 'mean', 'sum' or 'none', got 'typo'"):
        O.SoftmaxCrossEntropyOp(reduction="typo")


def test_tinygrad_cross_entropy_class_indices_of_the_wrong_shape_are_refused():
    """tinygrad:test_cross_entropy_class_indices: (32, 10) logits with (32, 1) labels raise."""
    with pytest.raises(ShapeError, match=r"labels must have shape \(32,\)"):
        O.SoftmaxCrossEntropyOp()(Variable.from_numpy(np.zeros((32, 10))), Variable.from_numpy(np.zeros((32, 1))))


def test_tinygrad_slice_errors_name_the_op():
    """tinygrad:test_slice_errors: too many indices, out of bounds, two Ellipsis, a zero step."""
    x = Variable.from_numpy(np.ones((4, 3)))
    for key in [(1, 77, 77, 77), (1, 3), (1, -4), (Ellipsis, Ellipsis)]:
        with pytest.raises(ShapeError, match="IndexOp"):
            O.IndexOp(key)(x)
    with pytest.raises(ShapeError, match="slice step cannot be zero"):
        O.IndexOp((slice(None, None, 0), 1))(x)


def test_the_suite_covers_every_peer_and_keeps_expected_failures_below_five_percent():
    counts = {peer: sum(c.peer == peer for c in ALL) for peer in ("tinygrad", "needle", "dezero", "micrograd")}
    assert all(counts.values()), counts
    assert sum(c.xfail is not None for c in ALL) < 0.05 * len(ALL)


def test_engine_is_left_in_training_mode():
    assert Engine.is_training
