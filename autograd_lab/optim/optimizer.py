"""Optimizer: the base class of SGD and Adam.

An optimizer holds a list of :class:`~autograd_lab.Parameter` objects and nothing else can be given to it: plain
Variables (input batches, intermediate values) are never trained. ``step()`` changes each parameter through
``Parameter.add_`` (an in-place add that bumps the parameter's version, so a graph built before the step refuses to
run backward); it never assigns ``.data``. Work arrays are allocated once, in the constructor, so a step allocates
no arrays of parameter size.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from autograd_lab.variable import Parameter


def check_parameters(params: Iterable[Parameter], where: str) -> list[Parameter]:
    """Return ``params`` as a list after checking that every item is a distinct Parameter.

    Raises:
        TypeError: if an item is not a Parameter (names its index and type).
        ValueError: if the list is empty or a parameter appears twice.
    """
    if isinstance(params, Parameter):
        raise TypeError(f"{where}: params must be an iterable of Parameters (e.g. model.parameters()), not one")
    result = list(params)
    for i, p in enumerate(result):
        if not isinstance(p, Parameter):
            raise TypeError(
                f"{where}: params[{i}] is a {type(p).__name__}, not a Parameter; optimizers only update Parameters "
                "(make trainable values with Parameter(array), and keep data as plain Variables)"
            )
    if not result:
        raise ValueError(f"{where}: got an empty parameter list")
    if len({id(p) for p in result}) != len(result):
        raise ValueError(f"{where}: a parameter appears more than once")
    return result


def check_hyper(name: str, value: float, low: float = 0.0, high: float = np.inf, where: str = "") -> float:
    """Return ``float(value)`` if low ≤ value < high (or ≤ high when high is inf); raise ValueError otherwise."""
    v = float(value)
    if not (low <= v < high) or not np.isfinite(v):
        raise ValueError(f"{where}: {name} must be in [{low}, {high}), got {value!r}")
    return v


class Optimizer:
    """Base class. Subclasses implement ``_update(i, p, grad)`` for parameter ``i``; ``step`` skips parameters
    without a gradient.

    Attributes:
        params: the Parameters, in the given order.
        lr: learning rate (may be changed between steps, e.g. by a schedule).
    """

    def __init__(self, params: Iterable[Parameter], lr: float) -> None:
        where = type(self).__name__
        self.params = check_parameters(params, where)
        self.lr = check_hyper("lr", lr, where=where)

    def zero_grad(self) -> None:
        """Forget the gradients of this optimizer's Parameters (``grad = None``); nothing else is touched.

        Setting None rather than filling zeros saves a pass: the next backward stores its gradient directly.
        """
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Update every parameter that has a gradient, in place (``Parameter.add_``)."""
        for i, p in enumerate(self.params):
            if p.grad is not None:
                self._update(i, p, p.grad)

    def _update(self, i: int, p: Parameter, grad: np.ndarray) -> None:
        raise NotImplementedError(f"{type(self).__name__}._update is not implemented")
