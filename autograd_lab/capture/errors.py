"""Errors of capture and replay."""

from __future__ import annotations

from autograd_lab.errors import AutogradError, ShapeError


class CaptureError(AutogradError, RuntimeError):
    """The function cannot be captured as a fixed program: its graph would depend on the data (Python read a value
    while tracing), or it returned something that is not a Variable built by operators."""


class ReplayShapeError(ShapeError):
    """A replay was given inputs whose shapes or dtypes differ from the captured ones (re-capture for those)."""
