"""Training speed, equivalence and memory, measured side by side in one run: ``python benchmarks/bench_training.py``.

Workload (issue 3): MLP 784-128-10, ReLU, batch 64, SGD lr 0.1, float32, one epoch of 60,000 images, one BLAS thread.
Data: Fashion-MNIST from the Debian package ``dataset-fashion-mnist`` when installed, else random data of that size.
Other workloads register in ``WORKLOADS`` and are chosen with ``--model`` (see :class:`Workload`).

Contenders, each doing the same work per step (forward, loss value, correct count, backward, SGD update) on the same
batches from the same initial weights:
  * plan: ``training.train_epoch`` with the captured, replayed step (the trainer's default, issue 13);
  * eager: the same trainer with ``engine="eager"``, a new graph on every step (reported as a figure);
  * numpy: a hand-written forward/backward loop with no graph objects (the lower bound; MLP only);
  * op bodies: the MLP's operators' forward/backward bodies called in a straight line with an inline update, no
    plan, trainer or optimizer object (a figure: what calling the ops alone costs over the loop; MLP only);
  * pytorch: PyTorch eager on the CPU, when installed.

Prints the CPU time per step measured in short turns taken by every contender in one run (:func:`time_in_turns`)
and the ratios against the targets (plan ≤ 1.05x NumPy, ≤ 0.6x PyTorch), then whole epochs (best of ``--repeats``,
a figure), whether plan and eager end with bit-identical parameters, the largest parameter difference from the
NumPy loop after one epoch (≤ 1e-5), the peak RSS growth after the first epoch of a multi-epoch run in which the
caller keeps every loss Variable (< 5 MB), and the cost and allocations of one optimizer step. ``--accuracy`` adds
the 10-epoch accuracy runs (Fashion-MNIST ≥ 88%, full MNIST ≥ 97.8% when its files are available); ``--profile``
prints where the plan's epoch spends its time; ``--callgrind`` counts instructions per step with valgrind, a
measure the machine's load does not change (the ratios of times stay the goals).
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy is imported: BLAS reads it once, at load time

import argparse
import cProfile
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograd_lab import Variable
from autograd_lab.data import DataError, load_dataset
from autograd_lab.nn import MLP, SequenceClassifier
from autograd_lab.nn.module import Module
from autograd_lab.optim import SGD, Adam
from autograd_lab.training import evaluate, fit, seeded_generators, train_epoch
from autograd_lab.training.loop import training_step

SIZES = [784, 128, 10]
LSTM_HIDDEN = 64
BATCH, LR, SEED = 64, 0.1, 0
TARGET_NUMPY, TARGET_TORCH, TOL_PARAMS, MAX_GROWTH_MB = 1.05, 0.6, 1e-5, 5.0
Arrays = list[np.ndarray]


def blas_threads() -> str:
    """Describe the BLAS thread pools (threadpoolctl), to prove the one-thread setting took effect."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed: BLAS threads not verified"
    pools = [f"{p['internal_api']} {p['num_threads']} thread(s)" for p in threadpool_info() if p["user_api"] == "blas"]
    return ", ".join(pools) or "no BLAS pool found"


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    try:
        data = load_dataset("fashion-mnist", download=False)
        return data.x_train, data.y_train, data.x_test, data.y_test, data.describe()
    except DataError:
        rng = np.random.default_rng(SEED)
        x = rng.random((60_000, 784), dtype=np.float32)
        y = rng.integers(0, 10, 60_000)
        return x, y, x[:10_000], y[:10_000], "synthetic data, 60000 random images (Fashion-MNIST not installed)"


def batch_order(n: int) -> np.random.Generator:
    """The generator whose one ``permutation(n)`` call orders the epoch, for every contender."""
    return np.random.default_rng(SEED + 1)


# -- the contenders -----------------------------------------------------------------------------------------------
def build_mlp() -> Module:
    return MLP(SIZES, rng=0)


def autograd_lab_epoch(engine: str, build: Callable[[], Module] = build_mlp,
                       ) -> Callable[[np.ndarray, np.ndarray, Arrays], Arrays]:
    """One epoch of ``training.train_epoch`` (the trainer the command line uses) with the given engine, on the model
    ``build()`` makes, its parameters set to ``init``.

    The model is built once, here, outside the timed epoch: building draws initial weights that ``init`` replaces
    at once (about 1% of an MLP epoch), while the NumPy loop is handed its weights. Each epoch copies ``init`` in
    (as the NumPy loop copies it), makes its optimizer and, with the plan, a new Plan, so the captures are timed.
    """
    model = build()
    names = [n for n, _ in model.named_parameters()]

    def epoch(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
        model.load_state_dict(dict(zip(names, init)))
        train_epoch(model, SGD(model.parameters(), lr=LR), x, y, BATCH, batch_order(len(x)), engine=engine)
        return [p.numpy() for p in model.parameters()]

    return epoch


epoch_autograd_lab = autograd_lab_epoch("plan")


def epoch_numpy(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
    """One epoch written out by hand: the same maths as the graph, with no graph.

    It uses the same NumPy entry points as the library's ops (``np.add.reduce`` rather than ``.sum()``, which adds a
    Python-level wrapper around the same call), so that the ratio measures the graph's overhead, not a choice of idiom.
    """
    w1, b1, w2, b2 = (a.copy() for a in init)
    order = batch_order(len(x)).permutation(len(x))
    lr = np.float32(LR)
    total_loss, correct = 0.0, 0
    for start in range(0, len(x), BATCH):
        idx = order[start:start + BATCH]
        xb, yb = x[idx], y[idx]
        n = len(idx)
        h = xb @ w1.T
        h += b1
        a = np.maximum(h, 0)
        z = a @ w2.T
        z += b2
        correct += int(np.count_nonzero(z.argmax(axis=1) == yb))
        z -= np.maximum.reduce(z, axis=1, keepdims=True)
        e = np.exp(z)
        s = np.add.reduce(e, axis=1, keepdims=True)
        rows = np.arange(n)
        total_loss += float(np.add.reduce(np.log(s)[:, 0] - z[rows, yb])) / n * n
        e /= s
        e[rows, yb] -= 1
        e /= n
        gw2 = e.T @ a
        gb2 = np.add.reduce(e, axis=0)
        ga = e @ w2
        ga *= h > 0
        gw1 = ga.T @ xb
        gb1 = np.add.reduce(ga, axis=0)
        w1 -= lr * gw1
        b1 -= lr * gb1
        w2 -= lr * gw2
        b2 -= lr * gb2
    return [w1, b1, w2, b2]


def op_bodies_epoch(read_only: bool = True, loss_op: type | None = None,
                    ) -> Callable[[np.ndarray, np.ndarray, Arrays], Arrays]:
    """The floor of "replay calls the same ops' bodies": an epoch in which the MLP's operators' ``forward`` and
    ``backward`` are called in a straight line, with only what their bodies need (``inputs``/``output`` saved, and
    with ``read_only`` values marked read-only as the design rules require) and the SGD arithmetic written inline;
    no plan, trainer or optimizer object. ``loss_op`` replaces SoftmaxCrossEntropyOp (``--decompose``).

    Not a contender of the goals: it shows how much of the gap to the NumPy loop the operators' own bodies take
    (label checks, the error-state guard, read-only marking, fresh arrays where the loop writes in place), which no
    plan that calls them can remove.
    """
    from autograd_lab.ops import AddOp, MatMulOp, ReLUOp, SoftmaxCrossEntropyOp

    def epoch(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
        w1, b1, w2, b2 = (a.copy() for a in init)
        work = [np.empty_like(a) for a in (w1, b1, w2, b2)]
        order = batch_order(len(x)).permutation(len(x))
        seed = np.ones((), np.float32)
        ops = mm1, add1, relu, mm2, add2, ce = (MatMulOp(transpose_b=True), AddOp(), ReLUOp(),
                                                MatMulOp(transpose_b=True), AddOp(),
                                                (loss_op or SoftmaxCrossEntropyOp)())
        mm1._needs, ce._needs = (False, True), (True, False)
        total_loss, correct = 0.0, 0
        for start in range(0, len(x), BATCH):
            idx = order[start:start + BATCH]
            xb, yb = x[idx], y[idx]
            value = xb
            for op, other in zip(ops, (w1, b1, None, w2, b2, yb.astype(np.float64))):  # labels as a Variable has them
                inputs = (value,) if other is None else (value, other)
                value = op.forward(*inputs)
                if read_only:
                    value.setflags(write=False)
                op.inputs, op.output = inputs, value
            logits = add2.output
            g = ce.backward(seed.copy())[0]
            g, gb2 = add2.backward(g)
            g, gw2 = mm2.backward(g)
            (g,) = relu.backward(g)
            g, gb1 = add1.backward(g)
            _, gw1 = mm1.backward(g)
            for p, grad, buffer in zip((w1, b1, w2, b2), (gw1, gb1, gw2, gb2), work):
                np.multiply(grad, -LR, out=buffer)
                np.add(p, buffer, out=p)
            total_loss += float(value) * len(idx)
            correct += int(np.count_nonzero(logits.argmax(axis=1) == yb))
        return [w1, b1, w2, b2]

    return epoch


epoch_op_bodies = op_bodies_epoch()


def _unchecked_cross_entropy() -> type:
    """SoftmaxCrossEntropyOp for trusted index labels: no whole-number and range check of the labels, no guard of
    the floating-point error state around ``exp`` (for ``--decompose`` only: what those two checks cost)."""
    from autograd_lab.ops import SoftmaxCrossEntropyOp

    class UncheckedCrossEntropyOp(SoftmaxCrossEntropyOp):
        def forward(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
            n = logits.shape[0]
            shifted = logits - np.maximum.reduce(logits, axis=1, keepdims=True)
            self._exp = np.exp(shifted)
            self._total = np.add.reduce(self._exp, axis=1, keepdims=True)
            self._rows, self._index_labels, self._log_probs = np.arange(n), labels.astype(np.intp), None
            picked = shifted[self._rows, self._index_labels]
            return np.asarray(np.add.reduce(np.log(self._total)[:, 0] - picked) / n + 0.0, dtype=logits.dtype)

    return UncheckedCrossEntropyOp


def torch_mlp(torch: Any) -> tuple[Any, list[Any]]:
    """The MLP in PyTorch, and its parameters in the order of autograd-lab's ``parameters()``."""
    l1, l2 = torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.Linear(SIZES[1], SIZES[2])
    return torch.nn.Sequential(l1, torch.nn.ReLU(), l2), [l1.weight, l1.bias, l2.weight, l2.bias]


def make_epoch_torch(build: Callable[[Any], tuple[Any, list[Any]]] = torch_mlp,
                     ) -> Callable[[np.ndarray, np.ndarray, Arrays], Arrays] | None:
    """One epoch of PyTorch eager on the CPU (one thread) for the model ``build(torch)`` makes, or None without
    PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)

    def epoch_torch(x: np.ndarray, y: np.ndarray, init: Arrays) -> Arrays:
        return torch_trainer(torch, build, init)(x, y)

    return epoch_torch


def torch_pass(torch: Any, net: Any, opt: Any, x: np.ndarray, y: np.ndarray, order: np.ndarray,
               batch: int = BATCH) -> tuple[float, int]:
    """One pass of PyTorch training over (x, y) in the given order, the work an epoch of the contenders does per
    mini-batch (forward, cross-entropy, loss value and correct count, backward, step); (summed loss, correct)."""
    xt, yt = torch.from_numpy(np.array(x)), torch.from_numpy(np.array(y))
    index = torch.from_numpy(order)
    total_loss, correct = 0.0, 0
    for start in range(0, len(x), batch):
        idx = index[start:start + batch]
        xb, yb = xt[idx], yt[idx]
        z = net(xb)
        loss = torch.nn.functional.cross_entropy(z, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total_loss += loss.item() * len(idx)
        correct += int((z.argmax(dim=1) == yb).sum())
    return total_loss, correct


def torch_trainer(torch: Any, build: Callable[[Any], tuple[Any, list[Any]]], init: Arrays,
                  ) -> Callable[[np.ndarray, np.ndarray], Arrays]:
    """A PyTorch model made once from ``init`` and a function training it for one pass over (x, y); returns the
    parameters after the pass."""
    net, params = build(torch)
    with torch.no_grad():
        for p, a in zip(params, init):
            p.copy_(torch.from_numpy(a))
    opt = torch.optim.SGD(params, lr=LR)

    def train(x: np.ndarray, y: np.ndarray) -> Arrays:
        torch_pass(torch, net, opt, x, y, batch_order(len(x)).permutation(len(x)))
        return [p.detach().numpy().copy() for p in params]

    return train


@dataclass
class Workload:
    """A model to time: built in autograd-lab and in PyTorch from the same initial weights, with its goals.

    To add the CNN: ``WORKLOADS["cnn"] = Workload("CNN ...", build_cnn, torch_cnn, None, {"plan / pytorch": 1.2})``
    where ``torch_cnn(torch)`` returns the PyTorch model (taking the flat (N, 784) batch) and its parameters in the
    order of the autograd-lab model's ``parameters()``.
    """

    describe: str
    build: Callable[[], Module]
    torch_build: Callable[[Any], tuple[Any, list[Any]]]
    numpy_epoch: Callable[[np.ndarray, np.ndarray, Arrays], Arrays] | None
    targets: dict[str, float]
    floor_epoch: Callable[[np.ndarray, np.ndarray, Arrays], Arrays] | None = None


def build_lstm() -> Module:
    return SequenceClassifier("lstm", 28, LSTM_HIDDEN, 10, rng=0)


def torch_lstm(torch: Any) -> tuple[Any, list[Any]]:
    """The LSTM in PyTorch (``nn.LSTM`` + ``nn.Linear`` on the last hidden state, taking the flat (N, 784) batch),
    and its parameters in the order of ``SequenceClassifier.parameters()``."""

    class Net(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(28, LSTM_HIDDEN, batch_first=True)
            self.head = torch.nn.Linear(LSTM_HIDDEN, 10)

        def forward(self, x: Any) -> Any:
            _, (h, _) = self.lstm(x.view(x.shape[0], 28, 28))
            return self.head(h[0])

    net = Net()
    lstm = net.lstm
    return net, [lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0, net.head.weight,
                 net.head.bias]


WORKLOADS = {
    "mlp": Workload(f"MLP {'-'.join(map(str, SIZES))} ReLU", build_mlp, torch_mlp, epoch_numpy,
                    {"plan / numpy": TARGET_NUMPY, "plan / pytorch": TARGET_TORCH}, epoch_op_bodies),
    # Issue 12's speed goal (≤ 2x PyTorch eager); bench_rnn.py times it on its own workload (Adam, bundled MNIST)
    # with the accuracy goal. An epoch of 60,000 sequences is long: --images 8000 gives bench_rnn's epoch size.
    "lstm": Workload(f"LSTM({LSTM_HIDDEN}) over 28 rows of 28 pixels, Linear head", build_lstm, torch_lstm, None,
                     {"plan / pytorch": 2.0}),
}


# -- measurements -------------------------------------------------------------------------------------------------
def report_ratio(label: str, ratio: float, target: float | None) -> None:
    """Print one ratio, with PASS/MISS against ``target`` (None: a figure, not a goal)."""
    verdict = "a figure, no target"
    if target is not None:
        verdict = f"target <= {target}: {'PASS' if ratio <= target else 'MISS'}"
    print(f"  {label:16s} = {ratio:.3f}  ({verdict})")


def report_engines(times: dict[str, float], targets: dict[str, float]) -> None:
    """Print plan and eager against numpy and pytorch (those present in ``times``), judged where ``targets`` has
    the ratio's label."""
    for first in ("plan", "eager"):
        for second in ("numpy", "pytorch"):
            if second in times:
                label = f"{first} / {second}"
                report_ratio(label, times[first] / times[second], targets.get(label))


def max_diff(a: Arrays, b: Arrays) -> float:
    return max(float(np.max(np.abs(p - q))) for p, q in zip(a, b))


def time_contenders(contenders: dict[str, Callable], x: np.ndarray, y: np.ndarray, init: Arrays,
                    repeats: int) -> tuple[dict[str, float], dict[str, float], dict[str, Arrays]]:
    """Best CPU time and best wall time of each contender over ``repeats`` interleaved runs, and its parameters.

    The work is single-threaded, so on an idle machine CPU time equals wall time; on a shared one the CPU time of
    this process is not inflated by other processes taking turns on the cores, so the ratios use it.
    """
    cpu = {name: float("inf") for name in contenders}
    wall = dict(cpu)
    results: dict[str, Arrays] = {}
    for _ in range(repeats):
        for name, fn in contenders.items():
            c0, w0 = time.process_time(), time.perf_counter()
            results[name] = fn(x, y, init)
            cpu[name] = min(cpu[name], time.process_time() - c0)
            wall[name] = min(wall[name], time.perf_counter() - w0)
    return cpu, wall, results


Trainer = Callable[[np.ndarray, np.ndarray], Any]


def turn_trainers(work: Workload, init: Arrays, torch_ok: bool, extra: dict[str, Callable]) -> dict[str, Trainer]:
    """For :func:`time_in_turns`: per contender, a function that trains one model, made once from ``init``, for one
    pass over the (x, y) it is given, keeping its state (weights, optimizer, and for the plan its captured step)
    from one call to the next, as a long training run does. ``extra``: epoch functions ``(x, y, init) -> params``
    (the NumPy loop, the op-body floors), continued from call to call through their parameters."""
    trainers: dict[str, Trainer] = {}
    for engine in ("plan", "eager"):
        model = work.build()
        model.load_state_dict(dict(zip([n for n, _ in model.named_parameters()], init)))
        opt = SGD(model.parameters(), lr=LR)
        step = training_step(model, opt.params) if engine == "plan" else "eager"
        rng = np.random.default_rng(SEED)
        trainers[engine] = (lambda m, o, e, r: lambda x, y: train_epoch(m, o, x, y, BATCH, r, engine=e))(
            model, opt, step, rng)
    for name, epoch in extra.items():
        state = [a.copy() for a in init]
        trainers[name] = (lambda f, w: lambda x, y: w.__setitem__(slice(None), f(x, y, w)))(epoch, state)
    if torch_ok:
        import torch
        trainers["pytorch"] = torch_trainer(torch, work.torch_build, init)
    return trainers


def time_in_turns(trainers: dict[str, Trainer], x: np.ndarray, y: np.ndarray, steps_per_turn: int,
                  ) -> dict[str, float]:
    """CPU seconds per step of each trainer, measured in turns: the trainers take turns of ``steps_per_turn``
    mini-batches each, on the same slices of the data, in an order reversed every round, until each has seen every
    image once; a turn's CPU time is added to its trainer's total.

    This machine's speed drifts by tens of percent over seconds (other tenants), so whole epochs timed one after the
    other compare different machines; turns of a few milliseconds see the same machine. The first round (captures,
    first touches of memory) is not counted.
    """
    per_turn = steps_per_turn * BATCH
    total = {name: 0.0 for name in trainers}
    steps = 0
    names = list(trainers)
    for k, start in enumerate(range(0, len(x) - per_turn + 1, per_turn)):
        xs, ys = x[start:start + per_turn], y[start:start + per_turn]
        for name in (names if k % 2 else reversed(names)):
            c0 = time.process_time()
            trainers[name](xs, ys)
            if k:
                total[name] += time.process_time() - c0
        steps += steps_per_turn if k else 0
    return {name: seconds / steps for name, seconds in total.items()}



def child_memory_growth(script: str, epochs: int, limit_mb: float, label: str) -> bool:
    """Run ``script --memory-child epochs`` (a fresh process, so the peaks are its own), print the peak RSS after each
    epoch and the growth after the first, and return whether the growth stays under ``limit_mb``."""
    child = subprocess.run([sys.executable, script, "--memory-child", str(epochs)], capture_output=True, text=True,
                           check=True)
    peaks = [float(p) for p in child.stdout.split()]
    growth = peaks[-1] - peaks[0]
    ok = growth < limit_mb
    print(f"peak RSS after epochs 1-{epochs}{label}: {', '.join(f'{p:.1f}' for p in peaks)} MB; growth after the first "
          f"epoch {growth:.2f} MB (limit {limit_mb}): {'PASS' if ok else 'FAIL'}")
    return ok

def peak_rss_mb() -> float:
    """Peak resident set size (MB) since the last :func:`reset_peak_rss` (Linux VmHWM), else since the start."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def reset_peak_rss() -> bool:
    """Start a new peak (Linux: writing 5 to /proc/self/clear_refs resets VmHWM); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def memory_growth(x: np.ndarray, y: np.ndarray, epochs: int) -> list[float]:
    """Peak RSS (MB) after each epoch of a run in which the caller keeps every loss Variable.

    Run in a fresh process (``--memory-child``), so that the peak is this run's and not an earlier contender's.
    """
    model = MLP(SIZES, rng=0)
    opt = SGD(model.parameters(), lr=LR)
    kept: list[Variable] = []
    rng = batch_order(len(x))
    peaks = []
    if not reset_peak_rss():
        print("  (cannot reset the peak RSS here: the peak includes loading the data)")
    for epoch in range(1, epochs + 1):
        train_epoch(model, opt, x, y, BATCH, rng, epoch=epoch, callback=lambda e, s, loss: kept.append(loss))
        peaks.append(peak_rss_mb())
    print(f"  kept {len(kept)} loss Variables; the last one: {kept[-1]!r}")
    return peaks


def memory_report(epochs: int) -> None:
    """Run :func:`memory_growth` in a child process and print its result."""
    child = subprocess.run([sys.executable, __file__, "--memory-child", str(epochs)], capture_output=True, text=True,
                           check=True)
    print(child.stdout, end="")


def optimizer_step_cost(steps: int = 2000) -> tuple[float, float, int, int]:
    """Median µs per SGD step (plain and momentum) on 784-128-10, and bytes allocated over 100 steps (tracemalloc)."""
    model = MLP(SIZES, rng=0)
    rng = np.random.default_rng(0)
    for p in model.parameters():
        p.grad = (rng.standard_normal(p.shape) * 1e-3).astype(np.float32)
    out = []
    for kwargs in ({}, {"momentum": 0.9}):
        opt = SGD(model.parameters(), lr=1e-3, **kwargs)
        opt.step()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            opt.step()
            times.append(time.perf_counter() - t0)
        out.append(float(np.median(times)) * 1e6)
    allocs = []
    for kwargs in ({}, {"momentum": 0.9}):
        opt = SGD(model.parameters(), lr=1e-3, **kwargs)
        opt.step()
        tracemalloc.start()
        for _ in range(100):
            opt.step()
        allocs.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return out[0], out[1], allocs[0], allocs[1]


CALLGRIND_IMAGES = (640, 3200)  # two epoch lengths; the difference cancels start-up, captures and data loading


def callgrind_child(name: str, images: int) -> None:
    """One epoch of ``images`` random images for contender ``name`` (run under valgrind by :func:`callgrind_report`)."""
    rng = np.random.default_rng(SEED)
    n = max(CALLGRIND_IMAGES)  # the same data for both lengths, so making it cancels out too
    x, y = rng.random((n, 784), dtype=np.float32)[:images], rng.integers(0, 10, n)[:images]
    init = [p.numpy() for p in build_mlp().parameters()]
    {"numpy": epoch_numpy, "plan": autograd_lab_epoch("plan"), "eager": autograd_lab_epoch("eager")}[name](x, y, init)


def callgrind_report() -> None:
    """Instructions per MLP step for numpy, plan and eager (valgrind's callgrind: a count that does not depend on the
    machine's load), from the difference between two epoch lengths run in fresh processes."""
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("numpy", "plan", "eager"):
            total = []
            for images in CALLGRIND_IMAGES:
                run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                                      sys.executable, __file__, "--callgrind-child", f"{name}:{images}"],
                                     capture_output=True, text=True, check=True)
                total.append(int(re.search(r"Collected : (\d+)", run.stderr).group(1)))  # type: ignore[union-attr]
            steps = (CALLGRIND_IMAGES[1] - CALLGRIND_IMAGES[0]) // BATCH
            counts[name] = (total[1] - total[0]) / steps
            print(f"  {name:6s} {counts[name] / 1e6:.3f} M instructions per step")
    for name in ("plan", "eager"):
        print(f"  {name} / numpy    = {counts[name] / counts['numpy']:.3f} in instructions (time weighs the "
              "interpreter's instructions more than BLAS's)")


def accuracy_runs() -> None:
    """10 epochs on the full data sets (the issue's accuracy goals): MLP 784-256-10, Adam lr 1e-3, batch 64."""
    goals = {"fashion-mnist": 0.88, "mnist": 0.978}
    for name, goal in goals.items():
        try:
            data = load_dataset(name, download=False)
        except DataError as exc:
            print(f"  {name}: SKIPPED (not available here: {str(exc).splitlines()[0]})")
            continue
        if data.source == "bundled":
            print(f"  {name}: SKIPPED (only the bundled subset is available, not the full set)")
            continue
        init_rng, order_rng = seeded_generators(SEED)
        model = MLP([784, 256, 10], rng=init_rng)
        opt = Adam(model.parameters(), lr=1e-3)
        start = time.perf_counter()
        fit(model, opt, data.x_train, data.y_train, epochs=10, batch_size=BATCH, rng=order_rng)
        _, acc = evaluate(model, data.x_test, data.y_test)
        verdict = "PASS" if acc >= goal else "MISS"
        print(f"  {name} ({data.source}): test accuracy {acc:.2%} after 10 epochs, goal >= {goal:.1%}: {verdict} "
              f"({time.perf_counter() - start:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decompose", action="store_true",
                        help="also time the op bodies with values left writable and with an unchecked loss (MLP)")
    parser.add_argument("--turn-steps", type=int, default=20, help="mini-batches per turn in the timing by turns")
    parser.add_argument("--turn-passes", type=int, default=2, help="passes over the data in the timing by turns")
    parser.add_argument("--repeats", type=int, default=2,
                        help="whole-epoch runs per contender (best is kept; they also give the equivalence checks)")
    parser.add_argument("--memory-epochs", type=int, default=10, help="epochs of the memory run")
    parser.add_argument("--accuracy", action="store_true", help="also run the 10-epoch accuracy goals (minutes)")
    parser.add_argument("--profile", action="store_true", help="profile one autograd-lab epoch")
    parser.add_argument("--model", choices=sorted(WORKLOADS), default="mlp", help="the workload to time")
    parser.add_argument("--images", type=int, default=0, help="time an epoch of only this many images (0: all)")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count instructions per step with valgrind (load-independent; minutes)")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--callgrind-child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.callgrind_child:
        name, images = args.callgrind_child.split(":")
        callgrind_child(name, int(images))
        return 0
    if args.memory_child:
        x, y, _, _, _ = load_data()
        peaks = memory_growth(x, y, args.memory_child)
        growth = peaks[-1] - peaks[0]
        kept_after_first = len(x) // BATCH * (args.memory_child - 1) or 1
        print(f"  peak RSS after each epoch (MB): {', '.join(f'{p:.1f}' for p in peaks)}")
        print(f"  growth after the first epoch: {growth:.2f} MB (limit {MAX_GROWTH_MB}): "
              f"{'PASS' if growth < MAX_GROWTH_MB else 'FAIL'}; about {growth * 2**20 / kept_after_first:.0f} bytes "
              "per loss kept since then (a loss Variable and its 0-d array)")
        return 0

    print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; BLAS: {blas_threads()}; NumPy {np.__version__}")
    x, y, _, _, source = load_data()
    if args.images:
        x, y = x[:args.images], y[:args.images]
    print(f"data: {source}")
    work = WORKLOADS[args.model]
    print(f"workload: {work.describe}, batch {BATCH}, SGD lr {LR}, float32, one epoch of {len(x)} images; each "
          "loop also computes the loss value and the correct count")
    init = [p.numpy() for p in work.build().parameters()]

    contenders: dict[str, Callable] = {"plan": autograd_lab_epoch("plan", work.build),
                                       "eager": autograd_lab_epoch("eager", work.build)}
    if work.numpy_epoch is not None:
        contenders["numpy"] = work.numpy_epoch
    if work.floor_epoch is not None:
        contenders["op bodies"] = work.floor_epoch
        if args.decompose:
            contenders["writable"] = op_bodies_epoch(read_only=False)
            contenders["unchecked loss"] = op_bodies_epoch(loss_op=_unchecked_cross_entropy())
            contenders["both"] = op_bodies_epoch(read_only=False, loss_op=_unchecked_cross_entropy())
    epoch_torch = make_epoch_torch(work.torch_build)
    if epoch_torch is not None:
        contenders["pytorch"] = epoch_torch
    else:
        print("pytorch: SKIPPED (not installed; pip install torch==2.13.0 for the CPU build)")
    per_step: dict[str, float] = {name: 0.0 for name in contenders}
    for _ in range(args.turn_passes):
        extra = {k: v for k, v in contenders.items() if k not in ("plan", "eager", "pytorch")}
        for name, seconds in time_in_turns(turn_trainers(work, init, "pytorch" in contenders, extra), x, y,
                                           args.turn_steps).items():
            per_step[name] += seconds / args.turn_passes
    print(f"\nCPU time per step, in turns of {args.turn_steps} steps ({args.turn_passes} pass(es) over the data; see "
          "time_in_turns); the goals are judged on these:")
    for name, seconds in per_step.items():
        print(f"  {name:10s} {seconds * 1e6:7.1f} us")
    report_engines(per_step, work.targets)
    if "op bodies" in per_step and "numpy" in per_step:
        print("  the same operators' bodies called in a straight line, nothing else (see op_bodies_epoch):")
        report_ratio("op bodies / numpy", per_step["op bodies"] / per_step["numpy"], None)
        report_ratio("plan / op bodies", per_step["plan"] / per_step["op bodies"], None)
        for name, what in (("writable", "values not marked read-only"),
                           ("unchecked loss", "no label check and no error-state guard in the loss"),
                           ("both", "both")):
            if name in per_step:
                report_ratio(f"{name} / numpy", per_step[name] / per_step["numpy"], None)
                print(f"      ({what})")

    best, wall, results = time_contenders(contenders, x, y, init, args.repeats)
    print(f"\nwhole epochs, each from the same initial weights (best of {args.repeats}, interleaved; the plan's four "
          "captures included; figures only, as the machine's speed drifts between epochs):")
    for name, seconds in best.items():
        print(f"  {name:10s} {seconds:6.3f} s CPU   {wall[name]:6.3f} s wall")
    report_engines(best, {})

    print("\nparameters after one epoch:")
    same = all(np.array_equal(a, b) for a, b in zip(results["plan"], results["eager"]))
    print(f"  plan and eager bit-identical: {'PASS' if same else 'FAIL'}")
    for name in ("writable", "unchecked loss", "both"):
        if name in results:
            print(f"  {name}: max |params - plan| = {max_diff(results[name], results['plan']):.2e}")
    if "op bodies" in results:
        same = all(np.array_equal(a, b) for a, b in zip(results["plan"], results["op bodies"]))
        print(f"  plan and the op bodies alone bit-identical: {'PASS' if same else 'FAIL'}")
    if "numpy" in results:
        diff = max_diff(results["plan"], results["numpy"])
        print(f"  max |plan - numpy| = {diff:.2e} (tolerance {TOL_PARAMS}): "
              f"{'PASS' if diff <= TOL_PARAMS else 'FAIL'}")
    if "pytorch" in results:
        print(f"  max |plan - pytorch| = {max_diff(results['plan'], results['pytorch']):.2e}")

    print(f"\nmemory: {args.memory_epochs} epochs in a fresh process, the caller keeping every loss Variable (the MLP "
          "workload; bench_rnn.py checks the LSTM's)")
    memory_report(args.memory_epochs)

    plain, momentum, alloc_plain, alloc_momentum = optimizer_step_cost()
    param_bytes = sum(p.nbytes for p in init)
    print(f"\noptimizer step on {param_bytes / 1024:.0f} KB of parameters: SGD {plain:.1f} us, "
          f"SGD+momentum {momentum:.1f} us (median); peak bytes allocated over 100 steps: "
          f"{alloc_plain} and {alloc_momentum} (no parameter-sized temporaries)")

    if args.accuracy:
        print("\naccuracy (MLP 784-256-10 ReLU, Adam lr 1e-3, batch 64, 10 epochs, no augmentation):")
        accuracy_runs()
    if args.callgrind:
        print("\ninstructions per step (callgrind, MLP, random data):")
        if shutil.which("valgrind") is None:
            print("  SKIPPED (valgrind not installed)")
        else:
            callgrind_report()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        epoch_autograd_lab(x, y, init)
        profiler.disable()
        print("\nprofile of one epoch of the plan (top 20 by own time):")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
