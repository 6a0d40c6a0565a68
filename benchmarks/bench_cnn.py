"""CNN speed, equivalence, memory and accuracy, measured side by side in one run: ``python benchmarks/bench_cnn.py``.

Workload (issue 11): ``CNN(channels=(8, 16))`` (conv 3x3 -> batch norm -> ReLU -> max-pool 2, twice, then Linear;
9,122 parameters), batch 64, float32, SGD lr 0.05 momentum 0.9, one epoch over the 8,000 bundled MNIST training
images, one BLAS thread.

Contenders, each doing the same work per step (forward, loss, correct count, backward, update) on the same batches
from the same initial weights:
  * autograd-lab: ``training.train_epoch`` (what ``autograd-lab train --model cnn`` runs);
  * NumPy: a hand-written loop, im2col convolution and the same maths with no graph objects (the lower bound);
  * PyTorch eager on the CPU (one thread), when installed.

Prints the CPU times (best of ``--repeats`` interleaved runs; CPU time, because the machine may be shared), the ratios
(goal: autograd-lab ≤ 1.5x PyTorch), the largest parameter difference from the NumPy loop after the epoch, and the
peak RSS growth after the first of three epochs (goal: flat, < 5 MB). ``--accuracy`` adds the CNN trained with the
command line's defaults, ``autograd-lab train --dataset mnist-bundled --model cnn --seed S`` (20 epochs, SGD 0.02 on
a cosine schedule, 1-pixel shifts, 7,600 training images: 5% are held for validation), for two seeds, scored on the
bundled held-out 2,000 images (goal ≥ 98.0% on average), next to the default MLP run; ``--fashion`` adds 10 epochs
on the full Fashion-MNIST with the CNN's defaults but no shifts (goal ≥ 90.5% on its 10,000 test images; needs
Debian's dataset-fashion-mnist).
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy is imported: BLAS reads it once, at load time

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_training import child_memory_growth

from autograd_lab.data import DataError, load_dataset
from autograd_lab.nn import CNN
from autograd_lab.optim import SGD
from autograd_lab.training import train_epoch
from autograd_lab.training.job import TrainConfig, run_training

BATCH, LR, MOMENTUM, EPS, BN_MOMENTUM, SEED = 64, 0.05, 0.9, 1e-5, 0.1, 0
TARGET_TORCH, MAX_GROWTH_MB, TARGET_ACC, TARGET_FASHION = 1.5, 5.0, 0.980, 0.905
ACCURACY_SEEDS = (0, 1)
Arrays = dict[str, np.ndarray]


def batch_order(n: int) -> np.random.Generator:
    """The generator whose one ``permutation(n)`` call orders the epoch, for every contender."""
    return np.random.default_rng(SEED + 1)


def initial_state() -> Arrays:
    return CNN(rng=SEED).state_dict()


# -- the contenders -----------------------------------------------------------------------------------------------
def epoch_autograd_lab(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
    model = CNN(rng=SEED)
    model.load_state_dict(init)
    train_epoch(model, SGD(model.parameters(), lr=LR, momentum=MOMENTUM), x, y, BATCH, batch_order(len(x)))
    return model.state_dict()


def _im2col(xp: np.ndarray, k: int, h: int, w: int) -> np.ndarray:
    n, c = xp.shape[:2]
    cols = np.empty((n, c, k, k, h, w), dtype=xp.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return cols.reshape(n, c * k * k, h * w)


def _conv_forward(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """3x3, stride 1, padding 1: y = W · im2col(x)."""
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2, wd + 2), dtype=x.dtype)
    xp[:, :, 1:-1, 1:-1] = x
    cols = _im2col(xp, 3, h, wd)
    return np.matmul(w.reshape(w.shape[0], -1), cols).reshape(n, w.shape[0], h, wd), cols


def _conv_backward(g: np.ndarray, w: np.ndarray, cols: np.ndarray, x_shape: tuple[int, ...] | None
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    n, o, h, wd = g.shape
    g2 = g.reshape(n, o, h * wd)
    gw = np.matmul(g2, cols.swapaxes(1, 2)).sum(axis=0).reshape(w.shape)
    if x_shape is None:
        return gw, None
    c = x_shape[1]
    dcols = np.matmul(w.reshape(o, -1).T, g2).reshape(n, c, 3, 3, h, wd)
    dxp = np.zeros((n, c, h + 2, wd + 2), dtype=g.dtype)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + h, j:j + wd] += dcols[:, :, i, j]
    return gw, dxp[:, :, 1:-1, 1:-1]


def _channel_sum(a: np.ndarray) -> np.ndarray:
    """Σ over N, H, W as (1, C, 1, 1), batch axis first (the library's order, so the two loops round alike)."""
    return a.sum(axis=0, keepdims=True).sum(axis=(2, 3), keepdims=True)


def _bn_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, stats: list[np.ndarray]
                ) -> tuple[np.ndarray, tuple]:
    m = x.size // x.shape[1]
    inv_m = np.float32(1 / m)
    mean = _channel_sum(x) * inv_m
    xc = x - mean
    var = _channel_sum(np.square(xc)) * inv_m
    rstd = 1 / np.sqrt(var + np.float32(EPS))
    stats[0] = (1 - BN_MOMENTUM) * stats[0] + BN_MOMENTUM * mean.ravel()
    stats[1] = (1 - BN_MOMENTUM) * stats[1] + BN_MOMENTUM * var.ravel() * (m / (m - 1))
    scale = gamma.reshape(1, -1, 1, 1) * rstd
    return xc * scale + beta.reshape(1, -1, 1, 1), (xc, rstd, scale, m)


def _bn_backward(g: np.ndarray, cache: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xc, rstd, scale, m = cache
    gb = _channel_sum(g)
    gg = _channel_sum(g * xc) * rstd
    inv_m = np.float32(1 / m)
    gx = g * scale
    gx -= xc * (scale * rstd * gg * inv_m)
    gx -= scale * gb * inv_m
    return gx, gg.ravel(), gb.ravel()


def _pool_forward(x: np.ndarray) -> np.ndarray:
    best = x[:, :, 0::2, 0::2].copy()
    for i, j in ((0, 1), (1, 0), (1, 1)):
        np.maximum(best, x[:, :, i::2, j::2], out=best)
    return best


def _pool_backward(g: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    gx = np.empty_like(x)
    free = np.ones(out.shape, dtype=bool)
    wins = np.empty(out.shape, dtype=bool)
    for i in (0, 1):
        for j in (0, 1):
            np.equal(x[:, :, i::2, j::2], out, out=wins)
            wins &= free
            free &= ~wins
            np.multiply(g, wins, out=gx[:, :, i::2, j::2])
    return gx


def epoch_numpy(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
    """One epoch written out by hand: the same maths as the graph, with no graph."""
    p = {k: v.copy() for k, v in init.items()}
    names = ["layers.0.weight", "layers.1.weight", "layers.1.bias", "layers.4.weight", "layers.5.weight",
             "layers.5.bias", "layers.9.weight", "layers.9.bias"]
    velocity: dict[str, np.ndarray] = {}
    stats1 = [p["layers.1.stats.mean"], p["layers.1.stats.var"]]
    stats2 = [p["layers.5.stats.mean"], p["layers.5.stats.var"]]
    order = batch_order(len(x)).permutation(len(x))
    total_loss, correct = 0.0, 0
    for start in range(0, len(x), BATCH):
        idx = order[start:start + BATCH]
        xb, yb = x[idx].reshape(-1, 1, 28, 28), y[idx]
        n = len(idx)
        c1, cols1 = _conv_forward(xb, p["layers.0.weight"])
        b1, bn1 = _bn_forward(c1, p["layers.1.weight"], p["layers.1.bias"], stats1)
        r1 = np.maximum(b1, 0)
        q1 = _pool_forward(r1)
        c2, cols2 = _conv_forward(q1, p["layers.4.weight"])
        b2, bn2 = _bn_forward(c2, p["layers.5.weight"], p["layers.5.bias"], stats2)
        r2 = np.maximum(b2, 0)
        q2 = _pool_forward(r2)
        f = q2.reshape(n, -1)
        z = f @ p["layers.9.weight"].T + p["layers.9.bias"]
        correct += int(np.count_nonzero(z.argmax(axis=1) == yb))
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        rows = np.arange(n)
        total_loss += float((np.log(s)[:, 0] - z[rows, yb]).sum())
        e /= s
        e[rows, yb] -= 1
        e /= n
        grads = {"layers.9.weight": e.T @ f, "layers.9.bias": e.sum(axis=0)}
        gq2 = (e @ p["layers.9.weight"]).reshape(q2.shape)
        gr2 = _pool_backward(gq2, r2, q2)
        gb2 = np.multiply(gr2, b2 > 0, out=gr2)
        gc2, grads["layers.5.weight"], grads["layers.5.bias"] = _bn_backward(gb2, bn2)
        grads["layers.4.weight"], gq1 = _conv_backward(gc2, p["layers.4.weight"], cols2, q1.shape)
        assert gq1 is not None
        gr1 = _pool_backward(gq1, r1, q1)
        gb1 = np.multiply(gr1, b1 > 0, out=gr1)
        gc1, grads["layers.1.weight"], grads["layers.1.bias"] = _bn_backward(gb1, bn1)
        grads["layers.0.weight"], _ = _conv_backward(gc1, p["layers.0.weight"], cols1, None)
        for k in names:
            g = grads[k]
            if k in velocity:
                velocity[k] *= np.float32(MOMENTUM)
                velocity[k] += g
            else:
                velocity[k] = g.astype(np.float32)
            p[k] -= np.float32(LR) * velocity[k]
    p["layers.1.stats.mean"], p["layers.1.stats.var"] = stats1
    p["layers.5.stats.mean"], p["layers.5.stats.var"] = stats2
    return p


def make_epoch_torch() -> Callable[[np.ndarray, np.ndarray, Arrays], Arrays] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    nn = torch.nn

    def epoch_torch(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
        net = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(784, 10))
        renamed = {"weight": "weight", "bias": "bias", "mean": "running_mean", "var": "running_var"}

        def tensor(name: str) -> torch.Tensor:  # "layers.1.stats.mean" -> net[1].running_mean
            return getattr(net[int(name.split(".")[1])], renamed[name.split(".")[-1]])

        with torch.no_grad():
            for name, value in init.items():
                tensor(name).copy_(torch.from_numpy(value))
        opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
        xt, yt = torch.from_numpy(np.array(x).reshape(-1, 1, 28, 28)), torch.from_numpy(np.array(y))
        order = torch.from_numpy(batch_order(len(x)).permutation(len(x)))
        total_loss, correct = 0.0, 0
        for start in range(0, len(x), BATCH):
            idx = order[start:start + BATCH]
            xb, yb = xt[idx], yt[idx]
            z = net(xb)
            loss = nn.functional.cross_entropy(z, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total_loss += loss.item() * len(idx)
            correct += int((z.argmax(dim=1) == yb).sum())
        return {name: tensor(name).detach().numpy().copy() for name in init}

    return epoch_torch


# -- measurements -------------------------------------------------------------------------------------------------
def time_contenders(contenders: dict[str, Callable], x: np.ndarray, y: np.ndarray, init: Arrays, repeats: int
                    ) -> tuple[dict[str, float], dict[str, Arrays]]:
    """Best CPU time of each contender over ``repeats`` interleaved runs, and its final state."""
    cpu = {name: float("inf") for name in contenders}
    results: dict[str, Arrays] = {}
    for _ in range(repeats):
        for name, fn in contenders.items():
            c0 = time.process_time()
            results[name] = fn(x, y, init)
            cpu[name] = min(cpu[name], time.process_time() - c0)
    return cpu, results


def peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise OSError("no VmHWM in /proc/self/status")


def memory_child(epochs: int) -> None:
    """Peak RSS after each epoch of a CNN run (in a fresh process, so the peak is this run's)."""
    data = load_dataset("mnist-bundled", log=lambda _: None)
    model = CNN(rng=SEED)
    opt = SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    rng = batch_order(len(data.x_train))
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    peaks = []
    for epoch in range(1, epochs + 1):
        train_epoch(model, opt, data.x_train, data.y_train, BATCH, rng, epoch=epoch)
        peaks.append(peak_rss_mb())
    print(" ".join(f"{p:.1f}" for p in peaks))


def accuracy_run(config: TrainConfig) -> tuple[float, float, int]:
    """Train through the command line's job; return (test accuracy, training CPU seconds, parameters)."""
    with tempfile.TemporaryDirectory() as out:
        config.output_dir = out
        c0 = time.process_time()
        result = run_training(config, log=lambda _: None)
        return result.test_accuracy, time.process_time() - c0, result.model.num_parameters()


def speed_and_memory(repeats: int) -> bool:
    """The epoch timings against the NumPy loop and PyTorch, the differences, and the memory run; True if the
    speed and memory goals hold."""
    ok = True
    data = load_dataset("mnist-bundled", log=lambda _: None)
    x, y = data.x_train, data.y_train
    init = initial_state()
    contenders: dict[str, Callable] = {"autograd-lab": epoch_autograd_lab, "numpy im2col": epoch_numpy}
    torch_epoch = make_epoch_torch()
    if torch_epoch is not None:
        contenders["pytorch eager"] = torch_epoch
    print(f"one epoch: CNN(8, 16), {len(x)} bundled MNIST images, batch {BATCH}, float32, 1 BLAS thread; "
          f"CPU seconds, best of {repeats}:")
    cpu, results = time_contenders(contenders, x, y, init, repeats)
    for name, seconds in cpu.items():
        print(f"  {name:14s} {seconds:6.2f} s")
    print(f"  autograd-lab / numpy im2col loop (the lower bound): {cpu['autograd-lab'] / cpu['numpy im2col']:.2f}x")
    if "pytorch eager" in cpu:
        ratio = cpu["autograd-lab"] / cpu["pytorch eager"]
        ok &= ratio <= TARGET_TORCH
        print(f"  autograd-lab / pytorch eager: {ratio:.2f}x (goal ≤ {TARGET_TORCH}x): "
              f"{'PASS' if ratio <= TARGET_TORCH else 'FAIL'}")
    diff = max(float(np.abs(results["autograd-lab"][k] - results["numpy im2col"][k]).max()) for k in init)
    print(f"  largest difference from the NumPy loop after one epoch (weights and running statistics): {diff:.2e}")
    if torch_epoch is not None:
        # float32 rounding differs (summation order); a near-tie in max pooling or at a ReLU's kink can then go the
        # other way, and training amplifies it step by step: compare early too (float64 agrees to ~1e-12:
        # tests/nn/test_cnn_layers.py::TestAgainstPyTorch).
        early = {name: fn(x[:4 * BATCH], y[:4 * BATCH], init) for name, fn in
                 (("ours", epoch_autograd_lab), ("torch", torch_epoch))}
        rel = max(float(np.abs(early["ours"][k] - early["torch"][k]).max() / np.abs(early["torch"][k]).max())
                  for k in init)
        diff = max(float(np.abs(results["autograd-lab"][k] - results["pytorch eager"][k]).max()) for k in init)
        print(f"  difference from PyTorch: after 4 steps {rel:.1e} (largest, relative to each array's largest value); "
              f"after the epoch {diff:.2e} absolute (float32 rounding, amplified by {len(x) // BATCH} steps)")

    ok &= child_memory_growth(__file__, 3, MAX_GROWTH_MB, "")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved timing runs (best is kept)")
    parser.add_argument("--accuracy", action="store_true",
                        help="add the bundled-MNIST accuracy runs (default settings)")
    parser.add_argument("--no-speed", dest="speed", action="store_false",
                        help="skip the epoch timing and memory runs (only the accuracy runs asked for)")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(ACCURACY_SEEDS),
                        help="seeds of the CNN accuracy runs (the goal is their mean)")
    parser.add_argument("--no-mlp", dest="mlp", action="store_false", help="skip the MLP run next to the CNN's")
    parser.add_argument("--fashion", action="store_true", help="add the 10-epoch Fashion-MNIST run (minutes)")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child)
        return 0
    ok = True
    if args.speed:
        ok &= speed_and_memory(args.repeats)
    if args.accuracy:
        print("accuracy on the bundled held-out 2,000 images (trained on 7,600 of the 8,000 others; CPU seconds):")
        cnn_scores = []
        for seed in args.seeds:  # the score moves by about half a point between seeds: show more than one
            config = TrainConfig(dataset="mnist-bundled", model="cnn", plots=False, progress=False, seed=seed)
            acc, seconds, n_params = accuracy_run(config)
            cnn_scores.append(acc)
            print(f"  cnn, seed {seed}     {acc:.2%}  {n_params:7,d} parameters  {config.resolved().epochs} epochs  "
                  f"{seconds:5.1f} s")
        mean = float(np.mean(cnn_scores))
        ok &= mean >= TARGET_ACC
        print(f"  cnn, mean of {len(cnn_scores)} seeds: {mean:.2%} (goal ≥ {TARGET_ACC:.1%}): "
              f"{'PASS' if mean >= TARGET_ACC else 'FAIL'}")
    if args.accuracy and args.mlp:
        acc, seconds, n_params = accuracy_run(TrainConfig(dataset="mnist-bundled", plots=False, progress=False))
        print(f"  mlp (defaults)   {acc:.2%}  {n_params:7,d} parameters  20 epochs  {seconds:5.1f} s")
    if args.fashion:
        # the CNN's defaults (SGD 0.02, cosine) without shifts, on all 60,000 training images: 90.84% (2026-12-02);
        # with 1-pixel shifts 90.67%, and at lr 0.05 (the setting before the CNN's init became PyTorch's) 90.34%
        config = TrainConfig(dataset="fashion-mnist", model="cnn", epochs=10, augment_shift=0, val_fraction=0.0,
                             plots=False, progress=False, download=False)
        try:
            acc, seconds, _ = accuracy_run(config)
        except DataError as exc:
            print(f"fashion-mnist skipped: {exc}")
        else:
            ok &= acc >= TARGET_FASHION
            print(f"fashion-mnist, 10 epochs, full test set: {acc:.2%} (goal ≥ {TARGET_FASHION:.1%}), {seconds:.0f} s: "
                  f"{'PASS' if acc >= TARGET_FASHION else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
