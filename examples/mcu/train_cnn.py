"""Train the small CNN that tests, the benchmark and chapter 12 export, with this library, and save it as
``autograd_lab/export/pretrained/cnn_mnist.npz`` (with ``--model transformer``: the tiny vision transformer that
the transformer's export tests and benchmark use, ``vit_mnist.npz``).

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python examples/mcu/train_cnn.py [--seed 0]  # ~1 min of CPU
    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python examples/mcu/train_cnn.py --model transformer  # ~3 min

It runs exactly what ``autograd-lab train --dataset mnist-bundled --model cnn --seed SEED`` runs (the command line's
job, :func:`autograd_lab.training.job.run_training`, with the CNN's defaults from ``training.models.MODEL_DEFAULTS``):
conv 3x3 1->8 (padding 1), batch norm, ReLU, 2x2 max pool; conv 3x3 8->16, batch norm, ReLU, 2x2 max pool; flatten
(16*7*7 = 784); dense 784->10 (9,122 parameters, PyTorch's default initialisation ``fan_in_uniform``); SGD with
momentum 0.9 at lr 0.02 on a cosine schedule, batch 64, 20 epochs, random shifts of up to 1 pixel, on 7,600 of the
8,000 bundled MNIST training images (5% held for validation; the 2,000 held-out images are never seen). The trained
model is saved with its recipe, the command, the seed and its held-out accuracy in the file's ``meta``
(:func:`autograd_lab.export.pretrained.provenance`).

The earlier file was trained with PyTorch, because the library's trainer then scored 97.55-97.75% on the held-out
images. That was not a fault of the trainer: from the same initial weights and the same batches, the library and
PyTorch follow the same accuracy curve (``benchmarks/cnn_torch_parity.py``); the recipe was what differed
(see ``benchmarks/bench_cnn.py --accuracy``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

PRETRAINED = Path(__file__).resolve().parents[2] / "autograd_lab" / "export" / "pretrained"
OUT = {"cnn": PRETRAINED / "cnn_mnist.npz", "transformer": PRETRAINED / "vit_mnist.npz"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="the training seed (weights, batch order, shifts)")
    parser.add_argument("--model", choices=sorted(OUT), default="cnn", help="which model to train")
    parser.add_argument("--out", type=Path, default=None, help="where the model file goes")
    args = parser.parse_args(argv)
    args.out = args.out or OUT[args.model]

    from autograd_lab import __version__
    from autograd_lab.training.job import TrainConfig, run_training

    command = f"autograd-lab train --dataset mnist-bundled --model {args.model} --seed {args.seed}"
    with tempfile.TemporaryDirectory() as run_dir:
        config = TrainConfig(dataset="mnist-bundled", model=args.model, seed=args.seed, output_dir=run_dir, plots=False,
                             progress=False)
        result = run_training(config)
    c = result.metrics["config"]
    data = result.metrics["data"]
    meta = {
        "made_by": "examples/mcu/train_cnn.py",
        "trained_with": f"autograd-lab {__version__} (its own trainer, NumPy, 1 BLAS thread)",
        "command": command,
        "recipe": f"bundled MNIST, {data['train']} training images ({data['validation']} held for validation), "
                  f"{c['optimizer']} lr {c['lr']}"
                  + (f" momentum {c['momentum']}" if c['optimizer'] == "sgd" else f" weight decay {c['weight_decay']}")
                  + f" {c['lr_schedule']} schedule, batch {c['batch_size']}, {c['epochs']} epochs, shifts <= "
                  f"{c['augment_shift']} px"
                  + (f", init {result.model.config()['init']}" if args.model == "cnn" else ""),
        "seed": args.seed,
        "held_out_accuracy": result.test_accuracy,
        "held_out": "the 2,000 bundled MNIST test images",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result.model.save(args.out, meta=meta)
    print(f"held-out accuracy {result.test_accuracy:.2%}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
