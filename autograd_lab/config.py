"""Config: the global modes every layer reads, in one small object (as DeZero's ``Config``).

It imports nothing from the package, so the core files import in one direction: config ← variable ← operator ←
engine ← ops (each imports only modules to its left). The context managers in :mod:`autograd_lab.modes` switch these
attributes and restore them on exit; ``Engine.grad_enabled`` and the other ``Engine.<mode>`` names read and write
the same attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar


class Config:
    """The global modes (class attributes; never instantiated).

    Attributes:
        grad_enabled: when False (inside ``no_grad()``), operators record no graph.
        is_training: when False (inside ``eval_mode()``), dropout is the identity and batch normalisation uses its
            running statistics. An operator reads it once, at forward time.
        detect_anomaly: when True, the first NaN/inf in a forward value or gradient raises AnomalyError.
        recorder: while :func:`autograd_lab.capture.capture` runs, called by every operator call with
            ``(op, input_variables, output_variable)``; None otherwise.
        read_hook: while a capture runs, called with each Variable whose value Python reads (``.data``, ``.item()``,
            ``.numpy()``), so that a read that would make the graph depend on the data is refused; None otherwise.
    """

    grad_enabled: ClassVar[bool] = True
    is_training: ClassVar[bool] = True
    detect_anomaly: ClassVar[bool] = False
    recorder: ClassVar[Callable[[Any, Any, Any], None] | None] = None
    read_hook: ClassVar[Callable[[Any], None] | None] = None

    #: The names that ``Engine`` exposes too (``Engine.is_training`` reads and writes ``Config.is_training``).
    ENGINE_NAMES: ClassVar[tuple[str, ...]] = ("grad_enabled", "is_training", "detect_anomaly", "recorder")
