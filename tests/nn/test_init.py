"""Weight initialisations: the variances their papers prescribe, shapes, dtypes and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.nn.init import INITS, as_generator, get_init, he_normal, small_normal, xavier_uniform

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
