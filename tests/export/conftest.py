"""Shared helpers for the exporter tests: compile generated C on the host and compare it with NumPy."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from autograd_lab import Variable
from autograd_lab.export import build as b
from autograd_lab.export import graph_from_root, graph_to_c, write_c


@pytest.fixture
def gcc() -> None:
    """Skip when there is no host C compiler (every CI image and course machine has one)."""
    if shutil.which("gcc") is None:
        pytest.skip("needs a host C compiler (gcc)")


@pytest.fixture
def arm_tools() -> None:
    """Skip when the Cortex-M toolchain or QEMU is missing (CI installs them: see .ci/run)."""
    if not b.have_tools("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm"):
        pytest.skip("needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm")


@pytest.fixture
def run_in_c(tmp_path: Path, gcc: None) -> Callable[..., np.ndarray]:
    """``run_in_c(build_fn, inputs)``: trace ``build_fn(x)`` at inputs[0]'s shape, generate C, compile it with the
    strict host flags and return its outputs on every input (N, output size), float32."""

    def run(build_fn: Callable[[Variable], Variable], inputs: np.ndarray, name: str = "m") -> np.ndarray:
        x = Variable.from_numpy(np.asarray(inputs[0], dtype=np.float32), name="input")
        gen = graph_to_c(graph_from_root(build_fn(x), x), name)
        write_c(gen, tmp_path)
        exe = b.build_host(tmp_path, name, tmp_path / "build")
        return b.run_host(exe, np.asarray(inputs, dtype=np.float32).reshape(len(inputs), -1), gen.output_size)

    return run


@pytest.fixture(scope="session")
def mnist():
    """The bundled MNIST subset (8000 train / 2000 held-out images, float32 in [0, 1])."""
    from autograd_lab.data import load_bundled_mnist

    return load_bundled_mnist()


def train_mlp_numpy(x: np.ndarray, y: np.ndarray, hidden: int = 128, epochs: int = 1, seed: int = 0):
    """A 784-hidden-10 ReLU MLP trained by plain NumPy minibatch SGD (independent of our engine): (W1, b1, W2, b2)
    with weights shaped (out, in) like nn.Linear."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, np.sqrt(2 / x.shape[1]), (hidden, x.shape[1])).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = rng.normal(0, np.sqrt(1 / hidden), (10, hidden)).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    lr = np.float32(0.1)
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(x), 64):
            xb, yb = x[order[i:i + 64]], y[order[i:i + 64]]
            h = np.maximum(xb @ w1.T + b1, 0)
            z = h @ w2.T + b2
            p = np.exp(z - z.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(yb)), yb] -= 1
            g = p / len(yb)
            gh = (g @ w2) * (h > 0)
            w2 -= lr * (g.T @ h)
            b2 -= lr * g.sum(axis=0)
            w1 -= lr * (gh.T @ xb)
            b1 -= lr * gh.sum(axis=0)
    return w1, b1, w2, b2


@pytest.fixture(scope="session")
def trained_mlp(mnist):
    """An MLP([784, 128, 10]) holding weights trained for one epoch by :func:`train_mlp_numpy`."""
    from autograd_lab.nn import MLP

    w1, b1, w2, b2 = train_mlp_numpy(mnist.x_train, mnist.y_train)
    model = MLP([784, 128, 10], rng=0)
    model.load_state_dict({"layers.0.weight": w1, "layers.0.bias": b1, "layers.2.weight": w2, "layers.2.bias": b2})
    return model
