"""Tiny vision transformer: the plan's training epoch against PyTorch eager, side by side in one run, and memory
across epochs: ``python benchmarks/bench_transformer.py``.

Workload (issue 23, item 4): ``VisionTransformer()``, what ``autograd-lab train --model transformer`` builds (16
patches of 7x7, linear embedding and learned positions, 2 pre-norm encoder layers of width 64 with 4 heads and a
feed-forward width of 128, GELU in its tanh form, layer norm, the tokens' mean, a Linear head; 71,946 parameters),
batch 64, float32, AdamW lr 1e-3 weight decay 0.05, the 8,000 bundled MNIST training images, one BLAS thread.

Contenders, each doing the same work per step (forward, loss value, correct count, backward, update) on the same
batches from the same initial weights:
  * plan: ``training.train_epoch`` with the captured, replayed step (what the command line runs);
  * eager: the same trainer with ``engine="eager"``, a new graph on every step (a figure);
  * pytorch: the same architecture built from ``torch.nn.TransformerEncoderLayer`` (``norm_first=True``,
    ``batch_first=True``), eager on the CPU with one thread, ``torch.optim.AdamW``.

Prints the CPU time per epoch measured in turns of a few mini-batches taken by every contender in one run
(``bench_training.time_in_turns``: the machine is shared and its speed drifts, so whole epochs one after another
would compare different machines), the ratio plan / pytorch (goal ≤ 1.5x), the largest difference of the two
models' logits on one batch from the same weights (the architectures agree), and the peak RSS after each of three
epochs of the plan in a fresh process (goal: growth after the first epoch < 5 MB).
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy is imported: BLAS reads it once, at load time

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_training import (
    blas_threads,
    child_memory_growth,
    peak_rss_mb,
    report_ratio,
    reset_peak_rss,
    time_in_turns,
    torch_pass,
)

from autograd_lab import Variable
from autograd_lab.data import load_bundled_mnist
from autograd_lab.nn import VisionTransformer
from autograd_lab.optim import AdamW
from autograd_lab.training import train_epoch
from autograd_lab.training.loop import training_step

BATCH, LR, WEIGHT_DECAY, SEED = 64, 1e-3, 0.05, 0  # BATCH is also bench_training's (time_in_turns reads its own)
TARGET_TORCH, MAX_GROWTH_MB = 1.5, 5.0
#: our parameter name -> PyTorch's, where they differ (LayerNorm's gamma/beta are PyTorch's weight/bias)
TORCH_NAMES = {"gamma": "weight", "beta": "bias"}
Arrays = dict[str, np.ndarray]


def torch_name(name: str) -> str:
    head, _, last = name.rpartition(".")
    return f"{head}.{TORCH_NAMES.get(last, last)}"


def torch_vit(torch: Any, init: Arrays) -> Any:
    """``VisionTransformer()`` in PyTorch, its parameters named as ours (up to :data:`TORCH_NAMES`) and set to
    ``init``; takes the flat (N, 784) batch."""
    nn = torch.nn

    class Position(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(16, 64))

    class ViT(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(49, 64)
            self.position = Position()
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True,
                                           activation=lambda x: nn.functional.gelu(x, approximate="tanh"))
                for _ in range(2))
            self.norm = nn.LayerNorm(64)
            self.head = nn.Linear(64, 10)

        def forward(self, x: Any) -> Any:
            n = x.shape[0]
            patches = x.view(n, 4, 7, 4, 7).permute(0, 1, 3, 2, 4).reshape(n, 16, 49)
            h = self.embed(patches) + self.position.weight
            for layer in self.layers:
                h = layer(h)
            return self.head(self.norm(h).mean(dim=1))

    net = ViT()
    params = dict(net.named_parameters())
    if sorted(params) != sorted(torch_name(k) for k in init):
        raise AssertionError(f"the PyTorch model's parameters differ from ours: {sorted(params)}")
    with torch.no_grad():
        for name, value in init.items():
            params[torch_name(name)].copy_(torch.from_numpy(value))
    return net


def ours_trainer(init: Arrays, engine: str) -> Any:
    """A ViT made once from ``init`` and a function training it for one pass over (x, y), keeping its weights,
    AdamW state and (for the plan) its captured step from call to call, as a long run does."""
    model = VisionTransformer(rng=SEED)
    model.load_state_dict(init)
    opt = AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    step = training_step(model, opt.params) if engine == "plan" else "eager"
    rng = np.random.default_rng(SEED)
    return lambda x, y: train_epoch(model, opt, x, y, BATCH, rng, engine=step)


def torch_trainer(torch: Any, init: Arrays) -> Any:
    """The same for PyTorch: forward, cross-entropy, loss value, correct count, backward, AdamW step per batch."""
    net = torch_vit(torch, init)
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    rng = np.random.default_rng(SEED)

    def train(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
        return torch_pass(torch, net, opt, x, y, rng.permutation(len(x)), BATCH)

    return train


def logits_difference(torch: Any, init: Arrays, x: np.ndarray) -> float:
    """Largest |ours - PyTorch's| over the logits of one batch from the same weights (float32)."""
    model = VisionTransformer(rng=SEED)
    model.load_state_dict(init)
    ours = model(Variable.from_numpy(x)).data
    with torch.no_grad():
        theirs = torch_vit(torch, init)(torch.from_numpy(np.array(x))).numpy()
    return float(np.abs(ours - theirs).max())


def memory_child(epochs: int) -> None:
    """Peak RSS (MB) after each epoch of the plan (in a fresh process, so that the peak is this run's)."""
    data = load_bundled_mnist()
    model = VisionTransformer(rng=SEED)
    opt = AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    step = training_step(model, opt.params)
    rng = np.random.default_rng(SEED)
    if not reset_peak_rss():
        print("(cannot reset the peak RSS here: the peak includes loading the data)", file=sys.stderr)
    peaks = []
    for epoch in range(1, epochs + 1):
        train_epoch(model, opt, data.x_train, data.y_train, BATCH, rng, epoch=epoch, engine=step)
        peaks.append(peak_rss_mb())
    print(" ".join(f"{p:.1f}" for p in peaks))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2, help="passes of the turns over the 8,000 images (default 2)")
    parser.add_argument("--steps-per-turn", type=int, default=10, help="mini-batches per contender per turn")
    parser.add_argument("--no-eager", dest="eager", action="store_false", help="skip the eager engine's figure")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child)
        return 0
    ok = True
    data = load_bundled_mnist()
    x, y = data.x_train, data.y_train
    init = VisionTransformer(rng=SEED).state_dict()
    n_params = sum(a.size for a in init.values())
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
    trainers = {"plan": ours_trainer(init, "plan")}
    if args.eager:
        trainers["eager"] = ours_trainer(init, "eager")
    if torch is not None:
        trainers["pytorch"] = torch_trainer(torch, init)
    steps_per_epoch = -(-len(x) // BATCH)
    print(f"one epoch: VisionTransformer (2 pre-norm layers, width 64, 4 heads, {n_params:,} parameters), "
          f"{len(x)} bundled MNIST images, batch {BATCH}, float32, AdamW; {blas_threads()}")
    print(f"CPU seconds per epoch ({steps_per_epoch} steps), measured in turns of {args.steps_per_turn} mini-batches, "
          f"{args.epochs} passes (the first turn not counted):")
    per_step = {name: 0.0 for name in trainers}
    for _ in range(args.epochs):
        for name, seconds in time_in_turns(trainers, x, y, args.steps_per_turn).items():
            per_step[name] += seconds / args.epochs
    for name, seconds in per_step.items():
        print(f"  {name:8s} {seconds * steps_per_epoch:6.2f} s   ({seconds * 1e3:.2f} ms per step)")
    if torch is None:
        print("  PyTorch is not installed: no ratio (pip install torch==2.13.0)")
    else:
        ratio = per_step["plan"] / per_step["pytorch"]
        ok &= ratio <= TARGET_TORCH
        report_ratio("plan / pytorch", ratio, TARGET_TORCH)
        if args.eager:
            report_ratio("eager / pytorch", per_step["eager"] / per_step["pytorch"], None)
        print(f"  largest logits difference from PyTorch on one batch, same weights (float32): "
              f"{logits_difference(torch, init, x[:BATCH]):.1e}")
    ok &= child_memory_growth(__file__, 3, MAX_GROWTH_MB, " of the plan")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
