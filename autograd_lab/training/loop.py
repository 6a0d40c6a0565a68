"""The training loop: mini-batch gradient descent over epochs, with a history, a progress bar and a NaN guard.

One step is the course's recipe: build the graph (``model(x)``, ``cross_entropy``), ``optimizer.zero_grad()``,
``Engine.backward(loss, inputs=params)`` (only the parameters' gradients: the gradient with respect to the input
batch, a (N, 784) x (784, H) product, is never computed), optional clipping, ``optimizer.step()``.

Two engines run that step (``engine=``): ``"eager"`` builds the graph anew on every step (define-by-run, the
course's engine); ``"plan"`` (the default) captures the step once per batch shape and replays it
(:class:`autograd_lab.capture.Plan`, define-and-run). Both give bit-identical weights on the same batches.

Reproducibility: all randomness comes from generators derived from one seed (:func:`seeded_generators`), the batch
order from ``rng.permutation`` once per epoch, so two runs with the same seed give bit-identical weights (on the same
machine and NumPy/BLAS build).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from autograd_lab.capture import Plan
from autograd_lab.data.batching import iterate_minibatches
from autograd_lab.engine import Engine
from autograd_lab.nn.losses import cross_entropy
from autograd_lab.nn.module import Module
from autograd_lab.optim.clip import clip_grad_norm
from autograd_lab.optim.optimizer import Optimizer
from autograd_lab.training.augment import random_shift
from autograd_lab.training.evaluate import evaluate
from autograd_lab.variable import Variable

History = dict[str, list[float]]
#: Called after every step with (epoch, step, loss); the loss Variable's graph is already released (with the plan
#: engine it is a leaf holding the loss value).
StepCallback = Callable[[int, int, Variable], None]
ENGINES = ("plan", "eager")


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or inf; ``epoch`` (1-based) and ``step`` (1-based, within the epoch) say when."""

    def __init__(self, message: str, epoch: int, step: int) -> None:
        super().__init__(message)
        self.epoch = epoch
        self.step = step


def seeded_generators(seed: int, count: int = 2) -> list[np.random.Generator]:
    """``count`` independent generators derived from one seed (``np.random.SeedSequence(seed).spawn``).

    The training command uses the first for the initial weights and dropout, the second for the batch order.
    """
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(count)]


def _progress_bar(batches: Iterator[Any], total: int, epoch: int) -> Any:
    """A tqdm bar over the batches, or None when tqdm (the 'train' extra) is not installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(batches, total=total, desc=f"epoch {epoch}", unit="batch", leave=True)


def new_history() -> History:
    """An empty history: lists keyed ``epoch``, ``train_loss``, ``train_acc``, ``val_loss``, ``val_acc``."""
    return {"epoch": [], "train_loss": [], "train_acc": [], "val_loss": [], "val_acc": []}


def training_step(model: Module, params: list[Any]) -> Plan:
    """The training step as a :class:`~autograd_lab.capture.Plan`: ``(x (N, D), labels (N,)) -> (loss, logits)``,
    with the gradients of ``params`` (the optimizer's) left in their ``.grad``."""
    def step(x: Variable, labels: Variable) -> tuple[Variable, Variable]:
        logits = model(x)
        return cross_entropy(logits, labels), logits

    return Plan(step, wrt=params, copy=False)  # the mini-batches are made for the step: no second copy


def train_epoch(model: Module, optimizer: Optimizer, x: np.ndarray, y: np.ndarray, batch_size: int,
                rng: np.random.Generator, *, epoch: int = 1, clip_norm: float | None = None, progress: bool = False,
                augment_shift: int = 0, callback: StepCallback | None = None, engine: str | Plan = "plan",
                ) -> tuple[float, float]:
    """One pass over (x (N, D) float, y (N,) int labels) in shuffled mini-batches; return (mean loss, accuracy).

    The loss and accuracy are running values over the epoch's batches, measured before each update (in training
    mode, so with dropout and augmentation active). ``augment_shift`` > 0 moves each 28x28 image by up to that many
    pixels (:func:`~autograd_lab.training.augment.random_shift`, offsets drawn from ``rng``). ``engine`` is
    ``"plan"`` (capture once, replay), ``"eager"`` (a new graph every step) or a Plan made by
    :func:`training_step` (reused across epochs, as :func:`fit` does).

    Raises:
        NonFiniteLossError: when a batch's loss is NaN or inf, naming the epoch and step (no parameter is updated).
        ValueError: for an unknown engine.
    """
    params = optimizer.params
    plan = _plan_for(engine, model, params)
    n_batches = -(-len(x) // batch_size)
    batches = iterate_minibatches(x, y, batch_size, rng)
    bar = _progress_bar(batches, n_batches, epoch) if progress else None
    if bar is not None:
        batches = bar
    total_loss = 0.0
    correct = 0
    seen = 0
    model.train()
    for step, (xb, yb) in enumerate(batches, start=1):
        if augment_shift:
            xb = random_shift(xb, rng, augment_shift)
        if plan is None:
            logits_value, loss = _eager_forward(model, xb, yb)
            value = float(loss.data)
        else:
            optimizer.zero_grad()
            loss_value, logits_value = plan(xb, yb)  # forward and backward
            value = float(loss_value)
        if not math.isfinite(value):
            if bar is not None:
                bar.close()
            raise NonFiniteLossError(
                f"the loss became {value} at epoch {epoch}, step {step} of {n_batches} (learning rate {optimizer.lr}); "
                "lower the learning rate, or rerun under detect_anomaly() (--detect-anomaly on the command line) to "
                "find the first operation that produced NaN or inf",
                epoch, step,
            )
        if plan is None:
            optimizer.zero_grad()
            Engine.backward(loss, inputs=params)
        elif callback is not None:
            loss = Variable.from_numpy(loss_value, copy=False)
        if clip_norm is not None:
            clip_grad_norm(params, clip_norm)
        optimizer.step()
        total_loss += value * len(yb)
        correct += int(np.count_nonzero(logits_value.argmax(axis=1) == yb))
        seen += len(yb)
        if callback is not None:
            callback(epoch, step, loss)
        if bar is not None and (step % 25 == 0 or step == n_batches):
            bar.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.4f}", refresh=False)
    if bar is not None:
        bar.close()
    return total_loss / seen, correct / seen


def _eager_forward(model: Module, xb: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, Variable]:
    logits = model(Variable.from_numpy(xb, copy=False))  # a fresh mini-batch: no second copy
    return logits.data, cross_entropy(logits, yb)


def _plan_for(engine: str | Plan, model: Module, params: list[Any]) -> Plan | None:
    if isinstance(engine, Plan):
        return engine
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    return training_step(model, params) if engine == "plan" else None


def fit(model: Module, optimizer: Optimizer, x_train: np.ndarray, y_train: np.ndarray, *, epochs: int,
        batch_size: int, rng: np.random.Generator | int, x_val: np.ndarray | None = None,
        y_val: np.ndarray | None = None, clip_norm: float | None = None, augment_shift: int = 0,
        progress: bool = False, log: Callable[[str], None] | None = None,
        callback: StepCallback | None = None, engine: str = "plan") -> History:
    """Train for ``epochs`` epochs; after each, score the validation set (if given) and append to the history.

    Args:
        model: maps (N, D) inputs to (N, C) logits.
        optimizer: holds the model's parameters.
        x_train, y_train: (N, D) float inputs and (N,) int64 labels.
        epochs, batch_size: positive integers.
        rng: generator (or int seed) for the batch order.
        x_val, y_val: optional held-out data scored after every epoch (val_loss/val_acc are NaN without it).
        clip_norm: if given, clip the global gradient norm to this value each step.
        augment_shift: if > 0, shift each training image by up to this many pixels (28x28 images only).
        progress: show a tqdm bar per epoch with the running loss and accuracy.
        log: called with one summary line per epoch (e.g. ``print``).
        callback: called after every step (see :data:`StepCallback`).
        engine: ``"plan"`` (capture the step once per batch shape, replay it; the default) or ``"eager"``.

    Returns:
        The history (see :func:`new_history`); losses in nats per example, accuracies in [0, 1].

    Raises:
        ValueError: for non-positive epochs or batch_size, or an unknown engine.
        NonFiniteLossError: see :func:`train_epoch`.
    """
    for name, n in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"fit: {name} must be a positive integer, got {n!r}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    plan = _plan_for(engine, model, optimizer.params)
    history = new_history()
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        train_loss, train_acc = train_epoch(model, optimizer, x_train, y_train, batch_size, gen, epoch=epoch,
                                            clip_norm=clip_norm, progress=progress, augment_shift=augment_shift,
                                            callback=callback, engine=plan or "eager")
        seconds = time.perf_counter() - start
        val_loss, val_acc = (math.nan, math.nan)
        if x_val is not None and y_val is not None and len(x_val):
            val_loss, val_acc = evaluate(model, x_val, y_val)
        for key, value in (("epoch", epoch), ("train_loss", train_loss), ("train_acc", train_acc),
                           ("val_loss", val_loss), ("val_acc", val_acc)):
            history[key].append(value)
        if log is not None:
            log(f"epoch {epoch}/{epochs}: train loss {train_loss:.4f} acc {train_acc:.4f} | "
                f"val loss {val_loss:.4f} acc {val_acc:.4f} | {seconds:.2f} s")
    return history
