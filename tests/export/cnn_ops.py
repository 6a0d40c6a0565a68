"""The CNN ops the exporter tests trace: the library's own when it has them (branch ``cnn``), otherwise forward-only
stand-ins written here against the contract of docs/design.md (NCHW; conv = cross-correlation with w (C_out, C_in,
kH, kW), stride, padding; bias a separate AddOp; pooling by kernel and stride; BatchNormOp(stats, momentum, eps)(x,
gamma, beta) with ``stats.mean`` / ``stats.var``, in evaluation mode). The exporter finds ops by class name, so the
stand-ins trace exactly as the real ones will. Their forward values are the tests' NumPy oracle: computed with
sliding windows and einsum, independently of the exporter's patch gathering.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import autograd_lab.ops as ops
from autograd_lab import Parameter, Variable
from autograd_lab.operator import Operator
from autograd_lab.ops import AddOp, MatMulOp, ReLUOp, ReshapeOp


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


class _Conv2DOp(Operator):
    def __init__(self, stride=1, padding=0):
        self.stride = stride
        self.padding = padding

    def forward(self, x, w):
        (sy, sx), (py, px) = _pair(self.stride), _pair(self.padding)
        xp = np.pad(x, ((0, 0), (0, 0), (py, py), (px, px)))
        win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::sy, ::sx]  # (N, C, OH, OW, kH, kW)
        return np.einsum("ncyxij,ocij->noyx", win, w, optimize=True).astype(np.float32)


class _MaxPool2DOp(Operator):
    def __init__(self, kernel_size, stride=None):
        self.kernel_size = kernel_size
        self.stride = stride

    def _windows(self, x):
        k = _pair(self.kernel_size)
        s = k if self.stride is None else _pair(self.stride)
        return sliding_window_view(x, k, axis=(2, 3))[:, :, ::s[0], ::s[1]]

    def forward(self, x):
        return self._windows(x).max(axis=(4, 5))


class _AvgPool2DOp(_MaxPool2DOp):
    def forward(self, x):
        return self._windows(x).mean(axis=(4, 5), dtype=np.float32)


class RunningStatsStandIn:
    def __init__(self, mean, var):
        self.mean = mean
        self.var = var


class _BatchNormOp(Operator):
    def __init__(self, stats, momentum=0.1, eps=1e-5):
        self.stats = stats
        self.momentum = momentum
        self.eps = eps

    def forward(self, x, gamma, beta):
        shape = (1, -1) + (1,) * (x.ndim - 2)
        m, v = self.stats.mean.reshape(shape), self.stats.var.reshape(shape)
        return ((x - m) / np.sqrt(v + np.float32(self.eps)) * gamma.reshape(shape) + beta.reshape(shape)).astype(
            np.float32)


_Conv2DOp.__name__ = "Conv2DOp"
_MaxPool2DOp.__name__ = "MaxPool2DOp"
_AvgPool2DOp.__name__ = "AvgPool2DOp"
_BatchNormOp.__name__ = "BatchNormOp"
Conv2DOp = getattr(ops, "Conv2DOp", _Conv2DOp)
MaxPool2DOp = getattr(ops, "MaxPool2DOp", _MaxPool2DOp)
AvgPool2DOp = getattr(ops, "AvgPool2DOp", _AvgPool2DOp)
BatchNormOp = getattr(ops, "BatchNormOp", _BatchNormOp)
RunningStats = getattr(ops, "RunningStats", RunningStatsStandIn)
PRETRAINED = "autograd_lab/export/pretrained/cnn_mnist.npz"


def load_pretrained_cnn(path=None):
    """The pretrained small CNN (examples/mcu/train_cnn.py) as a function of ops: x (N, 784) -> logits (N, 10)."""
    from importlib import resources

    src = path or resources.files("autograd_lab.export").joinpath("pretrained", "cnn_mnist.npz")
    with np.load(src) as f:
        a = {k: f[k] for k in f.files}
    eps = float(a["eps"])
    p = {k: Parameter(v, name=k) for k, v in a.items() if v.dtype == np.float32 and v.ndim > 0
         and "running" not in k}
    stats = [RunningStats(a[f"bn{i}.running_mean"], a[f"bn{i}.running_var"]) for i in (1, 2)]

    def model(x: Variable) -> Variable:
        h = ReshapeOp((-1, 1, 28, 28))(x)
        for i in (1, 2):
            h = Conv2DOp(stride=1, padding=1)(h, p[f"conv{i}.weight"])
            h = BatchNormOp(stats[i - 1], 0.1, eps)(h, p[f"bn{i}.gamma"], p[f"bn{i}.beta"])
            h = MaxPool2DOp(2, 2)(ReLUOp()(h))
        h = ReshapeOp((-1, 784))(h)
        return AddOp()(MatMulOp(transpose_b=True)(h, p["fc.weight"]), p["fc.bias"])

    return model
