"""Exceptions raised by autograd-lab.

Every error names what was wrong and where: the operator class, the input index, the shapes involved and, when it is
known, the line of user code that created the node.
"""

from __future__ import annotations


class AutogradError(Exception):
    """Base class of every error raised by the engine."""


class ShapeError(AutogradError, ValueError):
    """An operator got inputs whose shapes do not fit, or a backward returned a gradient of the wrong shape."""


class GraphReleasedError(AutogradError, RuntimeError):
    """Backward or forward was asked to walk a graph whose nodes were already released by a previous backward."""


class CycleError(AutogradError, RuntimeError):
    """The graph contains a cycle (only possible by tampering with ``parents``)."""


class OperatorReuseError(AutogradError, RuntimeError):
    """An operator instance was called twice; each call needs a fresh operator object."""


class InPlaceModificationError(AutogradError, RuntimeError):
    """A value saved for backward was changed in place after the graph was built."""


class AnomalyError(AutogradError, FloatingPointError):
    """``detect_anomaly()`` found a NaN or inf in a forward value or a gradient."""
