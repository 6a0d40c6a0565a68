"""Weight initialisations: the variances their papers prescribe, shapes, dtypes and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.nn import CNN, Conv2d, Linear
from autograd_lab.nn.init import (
    INITS,
    as_generator,
    fan_in_uniform,
    get_init,
    he_normal,
    init_bias,
    small_normal,
    xavier_uniform,
)

FAN_IN, FAN_OUT = 784, 512  # 401,408 draws: the sample std is within ~0.2% of the true one


def test_he_normal_has_variance_two_over_fan_in():
    """He et al. (ICCV 2015), eq. 10: Var[w] = 2 / fan_in."""
    w = he_normal(FAN_IN, FAN_OUT, np.random.default_rng(0))
    assert w.shape == (FAN_OUT, FAN_IN) and w.dtype == np.float32
    assert abs(w.mean()) < 1e-3
    assert w.std() == pytest.approx(np.sqrt(2 / FAN_IN), rel=0.01)


def test_xavier_uniform_is_bounded_by_sqrt_six_over_fan_sum_with_variance_two_over_fan_sum():
    """Glorot & Bengio (AISTATS 2010), eq. 16: U(-a, a), a = √(6/(fan_in+fan_out)), variance a²/3."""
    w = xavier_uniform(FAN_IN, FAN_OUT, np.random.default_rng(0))
    a = np.sqrt(6 / (FAN_IN + FAN_OUT))
    assert w.shape == (FAN_OUT, FAN_IN)
    assert np.abs(w).max() <= a
    assert np.abs(w).max() > 0.99 * a
    assert w.var() == pytest.approx(2 / (FAN_IN + FAN_OUT), rel=0.01)


def test_small_normal_has_standard_deviation_0_01():
    """The seed article's N(0, 0.01) means a standard deviation of 0.01."""
    w = small_normal(FAN_IN, FAN_OUT, np.random.default_rng(0))
    assert w.std() == pytest.approx(0.01, rel=0.01)


def test_fan_in_uniform_is_bounded_by_one_over_sqrt_fan_in_with_variance_a_third_of_that_squared():
    """U(-b, b), b = 1/√fan_in: the bound is reached and the variance is b²/3 (a uniform's variance)."""
    w = fan_in_uniform(FAN_IN, FAN_OUT, np.random.default_rng(0))
    b = 1 / np.sqrt(FAN_IN)
    assert w.shape == (FAN_OUT, FAN_IN) and w.dtype == np.float32
    assert np.abs(w).max() <= b and np.abs(w).max() > 0.99 * b
    assert abs(w.mean()) < 1e-4
    assert w.var() == pytest.approx(b * b / 3, rel=0.01)


def test_biases_are_zero_except_with_fan_in_uniform_which_draws_them_like_its_weights():
    for name in ("he", "xavier", "normal"):
        gen = np.random.default_rng(0)
        np.testing.assert_array_equal(init_bias(name, 9, 4, gen), np.zeros(4, np.float32))
        assert gen.integers(1000) == np.random.default_rng(0).integers(1000)  # no draw made
    bias = init_bias("fan_in_uniform", 9, 20_000, np.random.default_rng(0), np.float64)
    assert bias.shape == (20_000,) and bias.dtype == np.float64
    assert np.abs(bias).max() <= 1 / 3 and bias.var() == pytest.approx(1 / 27, rel=0.03)
    with pytest.raises(ValueError, match="unknown init"):
        init_bias("kaiming", 9, 4, np.random.default_rng(0))


class TestFanInUniformIsPyTorchsDefault:
    """PyTorch's own nn.Linear / nn.Conv2d initialisation as the oracle: the same bound and variance per layer."""

    torch = pytest.importorskip("torch")

    @pytest.mark.parametrize(("ours", "theirs", "fan_in"), [
        (lambda: Linear(784, 10, init="fan_in_uniform", rng=0), lambda nn: nn.Linear(784, 10), 784),
        (lambda: Conv2d(8, 16, 3, init="fan_in_uniform", rng=0), lambda nn: nn.Conv2d(8, 16, 3), 72),
        (lambda: Conv2d(1, 8, (3, 5), init="fan_in_uniform", rng=0), lambda nn: nn.Conv2d(1, 8, (3, 5)), 15),
    ])
    def test_weights_and_biases_have_pytorchs_bound_and_variance(self, ours, theirs, fan_in):
        torch = self.torch
        torch.manual_seed(0)
        # many draws of each layer: PyTorch's by re-running its reset_parameters(), ours by fresh seeds
        twin = theirs(torch.nn)
        theirs_w, theirs_b = [], []
        for _ in range(40):
            twin.reset_parameters()
            theirs_w.append(twin.weight.detach().numpy().ravel().copy())
            theirs_b.append(twin.bias.detach().numpy().copy())
        layer = ours()
        ours_w = np.concatenate([layer.weight.data.ravel()] + [
            type(layer)(**_args(layer), init="fan_in_uniform", rng=s).weight.data.ravel() for s in range(1, 40)])
        ours_b = np.concatenate([layer.bias.data] + [
            type(layer)(**_args(layer), init="fan_in_uniform", rng=s).bias.data for s in range(1, 40)])
        tw, tb = np.concatenate(theirs_w), np.concatenate(theirs_b)
        bound = 1 / np.sqrt(fan_in)
        for a, b in ((ours_w, tw), (ours_b, tb)):
            assert np.abs(a).max() <= bound and np.abs(b).max() <= bound * (1 + 1e-6)
            assert a.var() == pytest.approx(b.var(), rel=0.15)  # both bound²/3, up to sampling noise
            assert a.var() == pytest.approx(bound * bound / 3, rel=0.15)


def _args(layer):
    if isinstance(layer, Linear):
        return {"in_features": layer.in_features, "out_features": layer.out_features}
    return {"in_channels": layer.in_channels, "out_channels": layer.out_channels, "kernel_size": layer.kernel_size}


def test_the_cnn_starts_from_pytorchs_default_and_the_mlp_from_he():
    """The CNN (batch-normalised) uses fan_in_uniform, PyTorch's default; the MLP keeps He's rule and zero biases."""
    cnn = CNN(rng=0)
    assert cnn.config()["init"] == "fan_in_uniform"
    conv1, conv2, fc = cnn.layers[0], cnn.layers[4], cnn.layers[9]
    assert np.abs(conv1.weight.data).max() <= 1 / 3 and np.abs(conv2.weight.data).max() <= 1 / np.sqrt(72)
    assert np.abs(fc.bias.data).max() <= 1 / 28 and np.count_nonzero(fc.bias.data) == 10
    mlp_layer = Linear(784, 256, rng=5)
    np.testing.assert_array_equal(mlp_layer.weight.data, he_normal(784, 256, np.random.default_rng(5)))
    np.testing.assert_array_equal(mlp_layer.bias.data, np.zeros(256, np.float32))


@pytest.mark.parametrize("name", sorted(INITS))
def test_same_seed_same_weights_and_dtype_is_respected(name):
    fn = get_init(name)
    a = fn(5, 3, np.random.default_rng(7), np.float64)
    b = fn(5, 3, np.random.default_rng(7), np.float64)
    assert a.dtype == np.float64 and a.shape == (3, 5)
    np.testing.assert_array_equal(a, b)


def test_unknown_init_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown init 'kaiming'.*'he'.*'normal'.*'xavier'"):
        get_init("kaiming")


def test_as_generator_accepts_seed_generator_or_none_and_rejects_the_rest():
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert as_generator(3).integers(1000) == np.random.default_rng(3).integers(1000)
    assert isinstance(as_generator(None), np.random.Generator)
    with pytest.raises(TypeError, match="rng must be"):
        as_generator(1.5)
