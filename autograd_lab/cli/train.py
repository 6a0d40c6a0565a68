"""``autograd-lab train``: train the MLP and save the model, metrics and plots (see autograd_lab.training.job)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autograd_lab.cli import HelpFormatter, float_in, int_at_least
from autograd_lab.training.job import OPTIMIZERS, TrainConfig
from autograd_lab.training.loop import ENGINES
from autograd_lab.training.models import MODELS
from autograd_lab.training.schedule import SCHEDULES

DATASETS = ("mnist", "fashion-mnist", "mnist-bundled")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to ``subparsers`` (an ``argparse`` subparsers action)."""
    from autograd_lab.training.models import describe_defaults

    d = TrainConfig()
    p = subparsers.add_parser(
        "train", help="train the MLP (default: MNIST, offline on the bundled subset)",
        description="Train an MLP with autograd-lab and save model.npz, metrics.json and PNG plots. With no options it "
                    "trains on MNIST from the first source that has it (data directory, cache, download, bundled "
                    "subset), so it works offline.",
        formatter_class=HelpFormatter,
    )
    data = p.add_argument_group("data")
    data.add_argument("--dataset", choices=DATASETS, default=d.dataset,
                      help="data set; mnist-bundled uses the 10,000 bundled MNIST images without looking elsewhere")
    data.add_argument("--data-dir", default=None,
                      help="directory holding the four IDX files (raw or .gz); default: look in the cache, then "
                           "download, then use the bundled subset")
    data.add_argument("--no-download", dest="download", action="store_false", default=None,
                      help="never download; without it, the data set is downloaded when no local source has it, unless "
                           "AUTOGRAD_LAB_OFFLINE=1 is set")
    data.add_argument("--val-fraction", type=float_in(0, 1, high_open=True), default=d.val_fraction,
                      help="share of the training images held out for validation")
    model = p.add_argument_group("model")
    model.add_argument("--model", choices=sorted(MODELS), default=d.model,
                       help="; ".join(f"{name}: {text}" for name, (_, text) in sorted(MODELS.items())))
    model.add_argument("--hidden", type=int_at_least(1), nargs="+", default=d.hidden, metavar="N",
                       help="hidden layer widths (mlp)")
    model.add_argument("--hidden-size", type=int_at_least(1), default=d.hidden_size, metavar="H",
                       help="state size of the rnn and lstm models")
    model.add_argument("--activation", choices=("relu", "leaky_relu", "sigmoid", "tanh"), default=d.activation,
                       help="hidden-layer activation")
    model.add_argument("--dropout", type=float_in(0, 1, high_open=True), default=d.dropout,
                       help="drop probability after hidden layers")
    model.add_argument("--layer-norm", action="store_true",
                       help="put a LayerNorm after each hidden Linear (default: off)")
    model.add_argument("--channels", type=int_at_least(1), nargs="+", default=d.channels, metavar="C",
                       help="cnn: output channels of each conv block (each block halves the image)")
    model.add_argument("--no-batch-norm", dest="batch_norm", action="store_false", default=d.batch_norm,
                       help="cnn: no BatchNorm2d after the convolutions (default: with)")
    train = p.add_argument_group("training")
    train.add_argument("--epochs", type=int_at_least(1), default=d.epochs,
                       help=f"passes over the training images (default: {describe_defaults('epochs')})")
    train.add_argument("--batch-size", type=int_at_least(1), default=d.batch_size, help="images per step")
    # epochs, optimizer, lr, lr-schedule, weight-decay and augment-shift default to None: the chosen model's default
    # (training.models.MODEL_DEFAULTS)
    train.add_argument("--lr", "--learning-rate", dest="lr", type=float_in(0, low_open=True), default=d.lr,
                       help=f"learning rate (default: {describe_defaults('lr')})")
    train.add_argument("--lr-schedule", choices=SCHEDULES, default=d.lr_schedule,
                       help="constant; cosine: from --lr down to 0 over the run; onecycle: up from --lr/25 to --lr "
                            "over the first 30%% of the steps, then down to --lr/2.5e5 (both step by step; default: "
                            f"{describe_defaults('lr_schedule')})")
    train.add_argument("--optimizer", choices=OPTIMIZERS, default=d.optimizer,
                       help="update rule; adamw: Adam with decoupled weight decay (default: "
                            f"{describe_defaults('optimizer')})")
    train.add_argument("--momentum", type=float_in(0, 1, high_open=True), default=d.momentum, help="SGD momentum")
    train.add_argument("--weight-decay", type=float_in(0), default=d.weight_decay,
                       help="weight decay: an L2 term in the gradient for sgd and adam, decoupled for adamw (default: "
                            f"{describe_defaults('weight_decay')})")
    train.add_argument("--clip-norm", type=float_in(0, low_open=True), default=None,
                       help="clip the global gradient norm to this value (default: no clipping)")
    train.add_argument("--augment-shift", type=int_at_least(0), default=d.augment_shift,
                       help="shift training images by up to this many pixels (0: off; default: "
                            f"{describe_defaults('augment_shift')})")
    train.add_argument("--seed", type=int_at_least(0), default=d.seed,
                       help="seed of every random choice (same seed: same weights)")
    train.add_argument("--engine", choices=ENGINES, default=d.engine,
                       help="plan: capture the training step once per batch shape and replay it (define-and-run, "
                            "fast); eager: build the graph anew on every step (define-by-run, the course's engine). "
                            "Both give the same weights")
    train.add_argument("--detect-anomaly", action="store_true",
                       help="stop at the first NaN/inf, naming the operation (slower; default: off)")
    out = p.add_argument_group("output")
    out.add_argument("--output-dir", "--out", dest="output_dir", default=d.output_dir, help="where files are written")
    out.add_argument("--no-plots", dest="plots", action="store_false", help="skip the PNG plots (default: write them)")
    out.add_argument("--no-progress", dest="progress", action="store_false",
                     help="no progress bars (default: show them)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the job; on failure print a one-paragraph reason to stderr and return 1 (2 for settings out of range)."""
    from autograd_lab.cli import UsageError
    from autograd_lab.data import DataError
    from autograd_lab.errors import AnomalyError
    from autograd_lab.training.job import run_training
    from autograd_lab.training.loop import NonFiniteLossError

    fields = TrainConfig.__dataclass_fields__
    config = TrainConfig(**{k: v for k, v in vars(args).items() if k in fields})
    try:
        config.check()  # the option types already check each value; this catches anything they cannot express
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        run_training(config)
    except NonFiniteLossError as exc:
        print(f"autograd-lab train: training stopped: {exc}", file=sys.stderr)
        return 1
    except AnomalyError as exc:
        print(f"autograd-lab train: detect_anomaly stopped training: {exc}", file=sys.stderr)
        return 1
    except (DataError, OSError) as exc:
        print(f"autograd-lab train: error: {exc}", file=sys.stderr)
        return 1
    return 0
