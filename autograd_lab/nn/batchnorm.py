"""Batch normalisation layers: learned scale and shift plus the running statistics, around BatchNormOp."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.errors import ShapeError
from autograd_lab.nn.module import Module
from autograd_lab.ops import BatchNormOp, RunningStats
from autograd_lab.variable import Parameter, Variable


class _BatchNorm(Module):
    _ndim: int
    _layout: str

    def __init__(self, num_features: int, momentum: float | None = 0.1, eps: float = 1e-5, dtype: Any = np.float32,
                 *, track_running_stats: bool = True) -> None:
        super().__init__()
        dtype = np.dtype(dtype)
        stats = RunningStats(num_features, dtype)  # checks num_features
        self.stats = stats if track_running_stats else None
        self.num_features = int(num_features)
        BatchNormOp(self.stats, momentum, eps)  # checks momentum and eps now rather than at the first call
        self.momentum = None if momentum is None else float(momentum)
        self.eps = float(eps)
        self.track_running_stats = bool(track_running_stats)
        self.weight = Parameter(np.ones(self.num_features, dtype=dtype), name="weight")
        self.bias = Parameter(np.zeros(self.num_features, dtype=dtype), name="bias")

    def forward(self, x: Variable) -> Variable:
        if x.ndim != self._ndim:
            raise ShapeError(f"{type(self).__name__} expects {self._layout} input, got shape {x.shape} "
                             f"(called at {user_callsite() or 'unknown'})")
        return BatchNormOp(self.stats, self.momentum, self.eps)(x, self.weight, self.bias)

    def config(self) -> dict[str, Any]:
        return {"num_features": self.num_features, "momentum": self.momentum, "eps": self.eps,
                "track_running_stats": self.track_running_stats, "dtype": self.weight.dtype.name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.num_features}, momentum={self.momentum}, eps={self.eps})"


class BatchNorm1d(_BatchNorm):
    """Batch norm over the batch for (N, C) input (:class:`~autograd_lab.ops.BatchNormOp` has the formulas).

    Parameters ``weight`` (γ, starts at 1) and ``bias`` (β, starts at 0), shape (C,); running statistics in
    ``stats`` (:class:`~autograd_lab.ops.RunningStats`), updated in training mode, used in evaluation mode
    (``model.eval()``), saved with the model.

    Args:
        num_features: C. momentum, eps: as BatchNormOp (PyTorch's defaults 0.1 and 1e-5; momentum=None for the
            cumulative average). track_running_stats: False keeps no running statistics (``stats`` is None) and
            normalises with the batch statistics in evaluation mode too, as PyTorch. dtype: float32.

    Raises:
        ValueError: for a bad size, momentum or eps. ShapeError (at call time): input not (N, C), or C wrong.
    """

    _ndim = 2
    _layout = "(N, C)"


class BatchNorm2d(_BatchNorm):
    """Batch norm per channel over the batch and the pixels for (N, C, H, W) input (statistics over N·H·W values).

    As :class:`BatchNorm1d` otherwise.
    """

    _ndim = 4
    _layout = "(N, C, H, W)"
