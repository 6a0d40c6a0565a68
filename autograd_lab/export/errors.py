"""The exporter's error type."""

from __future__ import annotations

from autograd_lab.errors import AutogradError


class ExportError(AutogradError, ValueError):
    """The graph cannot be turned into C: an unsupported op, a non-finite weight, a shape the kernels do not handle,
    or a failed build. The message names the op class and the node."""
