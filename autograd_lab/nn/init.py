"""Weight initialisations for a layer with ``fan_in`` inputs and ``fan_out`` outputs.

Each function returns a new float array of shape ``(fan_out, fan_in)`` (the :class:`~autograd_lab.nn.Linear` weight
layout) drawn from the generator it is given, so a seeded generator gives the same weights every run.

* ``he``: N(0, 2/fan_in). Keeps the variance of activations constant through ReLU layers, which zero half their
  inputs (K. He, X. Zhang, S. Ren, J. Sun, "Delving Deep into Rectifiers", ICCV 2015, eq. 10).
* ``xavier``: U(-a, a) with a = √(6/(fan_in + fan_out)), variance 2/(fan_in + fan_out). Balances the variance of
  activations and of gradients for symmetric, nearly linear units such as tanh (X. Glorot, Y. Bengio, "Understanding
  the difficulty of training deep feedforward neural networks", AISTATS 2010, eq. 16).
* ``normal``: N(0, 0.01²), standard deviation 0.01, as in the course's seed article. Fine for one hidden layer; in
  deep networks the activations shrink layer by layer, which is the problem the two rules above solve.
* ``fan_in_uniform``: U(-b, b) with b = 1/√fan_in, variance 1/(3·fan_in), for the weights *and* the biases: PyTorch's
  default for ``nn.Linear`` and ``nn.Conv2d`` (``torch.nn.init.kaiming_uniform_`` with a = √5: bound
  gain·√(3/fan_in) with gain √(2/(1 + a²)) = √(1/3), i.e. 1/√fan_in; the rule comes from Lua Torch's ``reset()``,
  stdv = 1/√fan_in). A third of LeCun's variance 1/fan_in (Y. LeCun, L. Bottou, G. Orr, K.-R. Müller,
  "Efficient BackProp", 1998, sec. 4.6): too small to keep the activations' scale through many plain layers, but a
  batch-normalised layer restores the scale, and there the smaller weights mean larger effective steps (the update
  of a weight that batch norm rescales is divided by its norm; see the CNN's docstring).

Biases start at zero except with ``fan_in_uniform`` (:func:`init_bias`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import DTypeLike

InitFn = Callable[[int, int, np.random.Generator, DTypeLike], np.ndarray]


def he_normal(fan_in: int, fan_out: int, rng: np.random.Generator, dtype: DTypeLike = np.float32) -> np.ndarray:
    """He (Kaiming) normal: shape (fan_out, fan_in), N(0, 2/fan_in). See the module docstring for the source."""
    std = np.sqrt(2.0 / fan_in)
    return (rng.standard_normal((fan_out, fan_in)) * std).astype(dtype)


def xavier_uniform(
    fan_in: int, fan_out: int, rng: np.random.Generator, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """Xavier (Glorot) uniform: shape (fan_out, fan_in), U(-a, a), a = √(6/(fan_in + fan_out)). See the module doc."""
    a = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-a, a, size=(fan_out, fan_in)).astype(dtype)


def small_normal(
    fan_in: int, fan_out: int, rng: np.random.Generator, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """N(0, 0.01²): shape (fan_out, fan_in), standard deviation 0.01 (the seed article's choice)."""
    return (rng.standard_normal((fan_out, fan_in)) * 0.01).astype(dtype)


def fan_in_uniform(
    fan_in: int, fan_out: int, rng: np.random.Generator, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """PyTorch's default: shape (fan_out, fan_in), U(-b, b) with b = 1/√fan_in (variance 1/(3·fan_in)). See the
    module docstring for the source."""
    b = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-b, b, size=(fan_out, fan_in)).astype(dtype)


INITS: dict[str, InitFn] = {"he": he_normal, "xavier": xavier_uniform, "normal": small_normal,
                            "fan_in_uniform": fan_in_uniform}


def init_bias(name: str, fan_in: int, fan_out: int, rng: np.random.Generator,
              dtype: DTypeLike = np.float32) -> np.ndarray:
    """The starting bias, shape (fan_out,), that goes with weight initialisation ``name``: U(-1/√fan_in, 1/√fan_in)
    for ``"fan_in_uniform"`` (drawn after the weights, as PyTorch does), zeros for the others (no draw).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    get_init(name)
    if name == "fan_in_uniform":
        b = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-b, b, size=fan_out).astype(dtype)
    return np.zeros(fan_out, dtype=dtype)


def get_init(name: str) -> InitFn:
    """Look up an initialisation by name (``"he"``, ``"xavier"`` or ``"normal"``).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    try:
        return INITS[name]
    except KeyError:
        raise ValueError(f"unknown init {name!r}; choose one of {sorted(INITS)}") from None


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A generator from a seed (int), a generator (returned as is), or None (fresh OS entropy: not reproducible).

    Raises:
        TypeError: for anything else.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, an int seed or None, got {type(rng).__name__}")
