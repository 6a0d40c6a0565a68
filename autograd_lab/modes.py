"""Context managers that switch the global modes (:class:`autograd_lab.config.Config`).

``no_grad()`` (no graph is recorded: for evaluation and for optimizer arithmetic), ``eval_mode()`` / ``train_mode()``
(what dropout does), and ``detect_anomaly()`` (stop at the first NaN or inf). Each restores the previous mode on exit,
so they nest.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from autograd_lab.config import Config


@contextmanager
def _switch(attribute: str, value: bool) -> Iterator[None]:
    previous = getattr(Config, attribute)
    setattr(Config, attribute, value)
    try:
        yield
    finally:
        setattr(Config, attribute, previous)


def no_grad() -> AbstractContextManager[None]:
    """Operators called inside record no graph: their outputs are leaves and nothing is saved for backward."""
    return _switch("grad_enabled", False)


def eval_mode() -> AbstractContextManager[None]:
    """Evaluation mode: ``Config.is_training`` is False, so dropout is the identity."""
    return _switch("is_training", False)


def train_mode() -> AbstractContextManager[None]:
    """Training mode (the default): ``Config.is_training`` is True."""
    return _switch("is_training", True)


def detect_anomaly() -> AbstractContextManager[None]:
    """Raise AnomalyError at the first NaN or inf in a forward value or gradient, naming the op and its source line.

    Slower: every operator records the line that created it and every value is checked.
    """
    return _switch("detect_anomaly", True)
