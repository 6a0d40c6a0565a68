"""Loss functions as plain calls: ``cross_entropy(logits, labels)`` and ``mse_loss(pred, target)``.

They only wrap the fused operators (:class:`~autograd_lab.ops.SoftmaxCrossEntropyOp`,
:class:`~autograd_lab.ops.MSELossOp`), accepting NumPy arrays for the targets, so a training loop reads
``loss = cross_entropy(model(x), y)``. The graph still shows the operator.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.ops import MSELossOp, SoftmaxCrossEntropyOp
from autograd_lab.variable import Variable


def _as_variable(value: Variable | np.ndarray, name: str) -> Variable:
    return value if isinstance(value, Variable) else Variable.from_numpy(value, name=name)


def cross_entropy(logits: Variable, labels: Variable | np.ndarray) -> Variable:
    """Mean softmax cross-entropy: -(1/N) Σ_n log softmax(logits_n)[label_n]. Returns a 0-d Variable.

    Args:
        logits: (N, C) Variable, float32 or float64.
        labels: (N,) class indices (an integer array or a Variable), or (N, C) target probabilities.

    Raises:
        ShapeError: for mismatched shapes or labels outside [0, C) (from SoftmaxCrossEntropyOp).
    """
    return SoftmaxCrossEntropyOp()(logits, _as_variable(labels, "labels"))


def mse_loss(pred: Variable, target: Variable | np.ndarray) -> Variable:
    """Mean squared error (1/K) Σ (pred - target)² over all K elements. Returns a 0-d Variable.

    Raises:
        ShapeError: if the shapes differ (no broadcasting, see MSELossOp).
    """
    return MSELossOp()(pred, _as_variable(target, "target"))
