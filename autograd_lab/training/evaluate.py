"""Scoring a classifier: logits in batches without a graph, predicted labels, accuracy and mean loss."""

from __future__ import annotations

import numpy as np

from autograd_lab.modes import no_grad
from autograd_lab.nn.losses import cross_entropy
from autograd_lab.nn.module import Module
from autograd_lab.variable import Variable


def predict_logits(model: Module, x: np.ndarray, batch_size: int = 1000) -> np.ndarray:
    """Run ``model`` on ``x`` (N, D) in evaluation mode and without recording a graph; return logits (N, C).

    The model's training/evaluation flag is restored afterwards.
    """
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            parts = [model(Variable.from_numpy(x[i:i + batch_size])).data for i in range(0, len(x), batch_size)]
    finally:
        model.train(was_training)
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def predict(model: Module, x: np.ndarray, batch_size: int = 1000) -> np.ndarray:
    """Predicted class of each row of ``x``: argmax of the logits, int64 array of shape (N,)."""
    return predict_logits(model, x, batch_size).argmax(axis=1).astype(np.int64)


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of predictions equal to the labels, in [0, 1].

    Raises:
        ValueError: if the arrays differ in shape or are empty.
    """
    predicted, labels = np.asarray(predicted), np.asarray(labels)
    if predicted.shape != labels.shape or predicted.size == 0:
        raise ValueError(f"accuracy needs two equal, non-empty shapes, got {predicted.shape} and {labels.shape}")
    return float(np.mean(predicted == labels))


def evaluate(model: Module, x: np.ndarray, y: np.ndarray, batch_size: int = 1000) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of ``model`` on (x (N, D), y (N,) int labels), in evaluation mode.

    Returns:
        (loss, accuracy): the loss in nats per example, the accuracy in [0, 1].
    """
    logits = predict_logits(model, x, batch_size)
    with no_grad():
        loss = cross_entropy(Variable.from_numpy(logits), y).item()
    return loss, accuracy(logits.argmax(axis=1), y)
