"""Training and evaluation: the loop (:func:`fit`), scoring (:func:`evaluate`, :func:`accuracy`) and seeding."""

from autograd_lab.training.evaluate import accuracy, evaluate, predict, predict_logits
from autograd_lab.training.loop import (
    History,
    NonFiniteLossError,
    fit,
    new_history,
    seeded_generators,
    train_epoch,
)

__all__ = [
    "History",
    "NonFiniteLossError",
    "accuracy",
    "evaluate",
    "fit",
    "new_history",
    "predict",
    "predict_logits",
    "seeded_generators",
    "train_epoch",
]
