"""The main job behind ``autograd-lab train``: load data, train the MLP, score it, save the model, metrics and plots.

Kept apart from the command line so that tests and notebooks can run it with a :class:`TrainConfig`.

Output directory contents:
    model.npz            the trained MLP (``MLP.load``), with the data set it was scored on in its header
    metrics.json         configuration, data source, per-epoch history, test loss and accuracy, timings
    curves.png           loss and accuracy per epoch (training and validation)
    confusion.png        confusion matrix on the test set
    misclassified.png    the first 25 misclassified test images
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from autograd_lab import __version__
from autograd_lab.data import Dataset, load_dataset
from autograd_lab.modes import detect_anomaly
from autograd_lab.nn.activation import ACTIVATIONS
from autograd_lab.nn.module import Module
from autograd_lab.optim import SGD, Adam, AdamW
from autograd_lab.optim.optimizer import Optimizer
from autograd_lab.training.evaluate import evaluate, predict
from autograd_lab.training.loop import ENGINES, History, fit, seeded_generators
from autograd_lab.training.models import MODELS, build_model, model_defaults
from autograd_lab.training.schedule import SCHEDULES, CosineSchedule, OneCycleSchedule

Log = Callable[[str], None]
OPTIMIZERS = ("sgd", "adam", "adamw")
#: The TrainConfig fields whose default depends on the model: left at None, they take the chosen model's default
#: (:func:`autograd_lab.training.models.model_defaults`: SGD lr 0.05 with 2-pixel shifts and a constant rate for
#: 20 epochs for the MLP, Adam lr 3e-3 without augmentation for the recurrent models, a cosine schedule for the CNN,
#: AdamW on a one-cycle schedule for the transformer).
#: :meth:`TrainConfig.resolved` fills them in; run_training saves the filled-in config in metrics.json.
MODEL_SETTINGS = ("optimizer", "lr", "augment_shift", "lr_schedule", "epochs", "weight_decay")


@dataclass
class TrainConfig:
    """Everything that defines a training run. The defaults reach ≥ 95% on the bundled MNIST subset's held-out part
    in well under a minute (measured: see benchmarks/bench_training.py and tests/test_train.py).

    The default model stays ``mlp``: a newcomer's first run trains on full MNIST when it can be downloaded, where the
    MLP's 20 epochs take about a minute, and one CNN epoch over 60,000 images costs about 15 s of CPU (7.5x the
    bundled epoch measured by benchmarks/bench_cnn.py), so its better score would take several minutes. On the
    bundled subset ``--model cnn`` (its defaults: SGD 0.02 on a cosine schedule, 1-pixel shifts, 20 epochs) is the
    better run (98.55% and 98.45% for seeds 0 and 1, against the MLP's 96.4%, in about 50 s of CPU).
    """

    dataset: str = "mnist"
    model: str = "mlp"
    data_dir: str | None = None
    download: bool | None = None
    epochs: int | None = None
    batch_size: int = 64
    lr: float | None = None
    lr_schedule: str | None = None
    hidden: list[int] = field(default_factory=lambda: [256])
    hidden_size: int = 64
    activation: str = "relu"
    dropout: float = 0.0
    layer_norm: bool = False
    channels: list[int] = field(default_factory=lambda: [8, 16])
    batch_norm: bool = True
    optimizer: str | None = None
    momentum: float = 0.9
    weight_decay: float | None = None
    clip_norm: float | None = None
    augment_shift: int | None = None
    val_fraction: float = 0.05
    seed: int = 0
    output_dir: str = "runs/latest"
    plots: bool = True
    progress: bool = True
    detect_anomaly: bool = False
    engine: str = "plan"

    def check(self) -> None:
        """Check every setting before any work is done (no data is loaded, nothing downloaded).

        Raises:
            ValueError: naming the first setting out of range and its allowed range, e.g.
                ``"TrainConfig: epochs must be an integer ≥ 1, got 0"``.
        """
        def fail(name: str, rule: str) -> NoReturn:
            raise ValueError(f"TrainConfig: {name} must be {rule}, got {getattr(self, name)!r}")

        for name, low in (("epochs", 1), ("batch_size", 1), ("augment_shift", 0), ("seed", 0), ("hidden_size", 1)):
            value = getattr(self, name)
            if value is None and name in MODEL_SETTINGS:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                fail(name, f"an integer ≥ {low}")
        if not self.hidden or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in self.hidden):
            fail("hidden", "a non-empty list of integers ≥ 1")
        if not self.channels or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in self.channels):
            fail("channels", "a non-empty list of integers ≥ 1")
        for name in ("val_fraction", "dropout", "momentum"):
            if not 0 <= getattr(self, name) < 1:
                fail(name, "a number in [0, 1)")
        if self.lr is not None and not 0 < self.lr < math.inf:
            fail("lr", "a number in (0, inf)")
        if self.weight_decay is not None and not 0 <= self.weight_decay < math.inf:
            fail("weight_decay", "a number in [0, inf)")
        if self.clip_norm is not None and not 0 < self.clip_norm < math.inf:
            fail("clip_norm", "None or a number in (0, inf)")
        if self.lr_schedule is not None and self.lr_schedule not in SCHEDULES:
            fail("lr_schedule", f"one of {SCHEDULES}")
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            fail("optimizer", f"one of {OPTIMIZERS}")
        if self.engine not in ENGINES:
            fail("engine", f"one of {ENGINES}")
        if self.model not in MODELS:
            fail("model", f"one of {sorted(MODELS)}")
        if self.activation not in ACTIVATIONS:
            fail("activation", f"one of {sorted(ACTIVATIONS)}")

    def resolved(self) -> TrainConfig:
        """A copy with every setting of MODEL_SETTINGS left at None (optimizer, lr, augment_shift, lr_schedule,
        epochs, weight_decay) replaced by the model's default (``model_defaults``); a value given is kept whatever the
        model.

        Raises:
            ValueError: for an unknown model name.
        """
        defaults = model_defaults(self.model)
        return replace(self, **{name: defaults[name] for name in MODEL_SETTINGS if getattr(self, name) is None})


@dataclass
class TrainResult:
    """What a run produced: the model, its history, the test scores and where the files went."""

    model: Module
    history: History
    test_loss: float
    test_accuracy: float
    data: Dataset
    files: dict[str, Path]
    metrics: dict[str, Any]


def make_optimizer(config: TrainConfig, model: Module) -> Optimizer:
    """The optimizer named by ``config.optimizer`` over ``model.parameters()`` (None: the model's default).

    Raises:
        ValueError: for an unknown optimizer name.
    """
    config = config.resolved()
    assert config.lr is not None and config.weight_decay is not None  # resolved() filled them in
    if config.optimizer == "sgd":
        return SGD(model.parameters(), lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    if config.optimizer == "adam":
        return Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    if config.optimizer == "adamw":
        return AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    raise ValueError(f"unknown optimizer {config.optimizer!r}; choose one of {OPTIMIZERS}")


def split_validation(x: np.ndarray, y: np.ndarray, fraction: float, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hold out a random ``fraction`` of (x, y) for validation: returns x_train, y_train, x_val, y_val.

    Raises:
        ValueError: for a fraction outside [0, 1).
    """
    if not 0 <= fraction < 1:
        raise ValueError(f"val_fraction must be in [0, 1), got {fraction}")
    n_val = round(len(x) * fraction)
    order = rng.permutation(len(x))
    val, train = order[:n_val], order[n_val:]
    return x[train], y[train], x[val], y[val]


def eval_dataset_name(data: Dataset) -> str:
    """The ``load_dataset`` name that gives back the same test set (the bundled subset has its own name)."""
    return "mnist-bundled" if data.source == "bundled" else data.name


def run_training(config: TrainConfig, log: Log = print) -> TrainResult:
    """Run the whole job described by ``config`` and write its outputs. See the module docstring for the files.

    Raises:
        DataError: when no source has the data set.
        NonFiniteLossError: when the loss becomes NaN or inf (naming the epoch and step).
        ValueError: for invalid settings (:meth:`TrainConfig.check`, run before any data is loaded).
    """
    config.check()
    config = config.resolved()
    assert config.epochs is not None  # resolved() filled it in
    started = time.perf_counter()
    data = load_dataset(config.dataset, config.data_dir, download=config.download, progressbar=config.progress,
                        log=log)
    log(f"data: {data.describe()}")
    init_rng, order_rng, split_rng = seeded_generators(config.seed, 3)
    x_train, y_train, x_val, y_val = split_validation(data.x_train, data.y_train, config.val_fraction, split_rng)
    n_classes = len(data.class_names)
    model = build_model(config, x_train.shape[1], n_classes, init_rng)
    optimizer = make_optimizer(config, model)
    log(f"model: {config.model} {model.config()}, {model.num_parameters():,} parameters; optimizer "
        f"{config.optimizer} lr {config.lr} ({config.lr_schedule}), weight decay {config.weight_decay}, "
        f"{config.epochs} epochs; {len(x_train)} training / {len(x_val)} validation images")
    train_start = time.perf_counter()
    kwargs: dict[str, Any] = dict(epochs=config.epochs, batch_size=config.batch_size, rng=order_rng, x_val=x_val,
                                  y_val=y_val, clip_norm=config.clip_norm, augment_shift=config.augment_shift,
                                  progress=config.progress, log=log, engine=config.engine)
    schedules = {"cosine": CosineSchedule, "onecycle": OneCycleSchedule}
    if config.lr_schedule in schedules:
        kwargs["callback"] = schedules[config.lr_schedule](optimizer, -(-len(x_train) // config.batch_size),
                                                           config.epochs)
    if config.detect_anomaly:
        with detect_anomaly():
            history = fit(model, optimizer, x_train, y_train, **kwargs)
    else:
        history = fit(model, optimizer, x_train, y_train, **kwargs)
    train_seconds = time.perf_counter() - train_start

    test_loss, test_accuracy = evaluate(model, data.x_test, data.y_test)
    part = "held-out part of the bundled subset" if data.source == "bundled" else "test set"
    log(f"test accuracy: {test_accuracy:.2%} (loss {test_loss:.4f}) on the {part}, {len(data.y_test)} images")

    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"model": out / "model.npz", "metrics": out / "metrics.json"}
    model.save(files["model"], meta={"dataset": eval_dataset_name(data), "source": data.source,
                                     "test_accuracy": test_accuracy, "seed": config.seed})
    if config.plots:
        files.update(save_plots(model, data, history, out, log))
    metrics = {
        "config": asdict(config),
        "data": {"name": data.name, "source": data.source, "location": data.location, "train": len(x_train),
                 "validation": len(x_val), "test": len(data.y_test)},
        "history": history,
        "test_loss": test_loss,
        "test_accuracy": test_accuracy,
        "train_seconds": train_seconds,
        "total_seconds": time.perf_counter() - started,
        "versions": {"autograd_lab": __version__, "numpy": np.__version__, "python": platform.python_version()},
    }
    files["metrics"].write_text(json.dumps(_json_safe(metrics), indent=2) + "\n")
    for name, path in files.items():
        log(f"saved {name}: {path}")
    return TrainResult(model, history, test_loss, test_accuracy, data, files, metrics)


def save_plots(model: Module, data: Dataset, history: History, out: Path, log: Log) -> dict[str, Path]:
    """Write curves.png, confusion.png and misclassified.png into ``out``; skip them (saying why) without matplotlib.

    Returns:
        Name -> path of each file written.
    """
    try:
        from autograd_lab.viz.plots import plot_confusion_matrix, plot_misclassified, plot_training_curves
    except ImportError as exc:
        log(f"plots skipped: {exc} (install the 'train' extra: pip install 'autograd-lab[train]')")
        return {}
    predicted = predict(model, data.x_test)
    figures = {
        "curves": plot_training_curves(history),
        "confusion": plot_confusion_matrix(data.y_test, predicted, class_names=list(data.class_names)),
        "misclassified": plot_misclassified(data.x_test, data.y_test, predicted, max_images=25,
                                            class_names=list(data.class_names)),
    }
    paths = {}
    for name, fig in figures.items():
        paths[name] = out / f"{name}.png"
        fig.savefig(paths[name], dpi=100)
    return paths


def _json_safe(value: Any) -> Any:
    """NaN and inf become None (strict JSON has no such numbers); NumPy scalars become Python numbers."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
