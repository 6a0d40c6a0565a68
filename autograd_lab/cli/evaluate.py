"""``autograd-lab evaluate MODEL.npz``: score a saved model on a data set's test part."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from autograd_lab.cli import UsageError, int_at_least, load_model
from autograd_lab.cli.train import DATASETS


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``evaluate`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "evaluate", help="score a saved model (model.npz) on the test data",
        description="Load a model saved by 'autograd-lab train' and report its loss and accuracy on the test data "
                    "(by default the data set recorded in the model file).",
    )
    p.add_argument("model", type=Path, help="the .npz file written by 'autograd-lab train'")
    p.add_argument("--dataset", choices=DATASETS, default=None,
                   help="data set to score on (default: the one the model was trained on)")
    p.add_argument("--data-dir", default=None, help="directory holding the four IDX files")
    p.add_argument("--no-download", dest="download", action="store_false", default=None, help="never download")
    p.add_argument("--batch-size", type=int_at_least(1), default=1000, help="images per forward pass")
    p.add_argument("--output-dir", default=None, help="also write confusion.png and misclassified.png here")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Load, score, print. A missing or damaged model file, or one that does not fit the data, raises UsageError
    (exit 2); data that cannot be found returns 1 with a message on stderr."""
    from autograd_lab.data import DataError, load_dataset
    from autograd_lab.nn import read_header
    from autograd_lab.training.evaluate import evaluate, predict

    model = load_model(args.model)
    name = args.dataset or read_header(args.model)["meta"].get("dataset", "mnist")
    log = (lambda message: print(message, file=sys.stderr)) if args.json else print
    try:
        data = load_dataset(name, args.data_dir, download=args.download, log=log)
    except (OSError, DataError) as exc:
        print(f"autograd-lab evaluate: error: {exc}", file=sys.stderr)
        return 1
    from autograd_lab.training.models import input_output_sizes

    n_inputs, n_classes = input_output_sizes(model)
    if data.x_test.shape[1] != n_inputs or len(data.class_names) != n_classes:
        raise UsageError(f"the model maps {n_inputs} inputs to {n_classes} classes, but {data.name} has "
                         f"{data.x_test.shape[1]} pixels and {len(data.class_names)} classes")
    loss, acc = evaluate(model, data.x_test, data.y_test, batch_size=args.batch_size)
    result = {"model": str(args.model), "dataset": data.name, "source": data.source, "images": len(data.y_test),
              "loss": loss, "accuracy": acc}
    if args.output_dir:
        from autograd_lab.viz.plots import plot_confusion_matrix, plot_misclassified

        out = Path(args.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        predicted = predict(model, data.x_test, batch_size=args.batch_size)
        names = list(data.class_names)
        plot_confusion_matrix(data.y_test, predicted, class_names=names).savefig(out / "confusion.png", dpi=100)
        plot_misclassified(data.x_test, data.y_test, predicted, class_names=names).savefig(
            out / "misclassified.png", dpi=100)
        result["plots"] = str(out)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{data.describe()}")
        print(f"test accuracy: {acc:.2%} ({round(acc * len(data.y_test))}/{len(data.y_test)}), loss {loss:.4f}")
    return 0
