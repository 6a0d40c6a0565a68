"""Train the small CNN that tests, the benchmark and chapter 12 export, and save it as ``cnn_mnist.npz``.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python examples/mcu/train_cnn.py   # about a minute on one core

The architecture is the course's small CNN (issue 11): conv 3x3 1->8 (padding 1), batch norm, ReLU, 2x2 max pool;
conv 3x3 8->16 (padding 1), batch norm, ReLU, 2x2 max pool; flatten (16*7*7 = 784); dense 784->10. 9,098 trainable
parameters. It is trained on the 8,000 bundled MNIST training images (the 2,000 held-out images are never seen),
with PyTorch on the CPU: Adam, lr 3e-3 with cosine decay, batch 64, 15 epochs, light augmentation (random shifts of
up to 2 pixels), seed 0. The weights are then loaded into this library's :class:`autograd_lab.nn.CNN` (the same
architecture, parameter for parameter) and saved in the library's model format, with the settings, the PyTorch
held-out accuracy and the library's own held-out accuracy in its ``meta``; the file does not depend on PyTorch.

Why PyTorch: the library's own trainer, ``autograd-lab train --dataset mnist-bundled --model cnn --epochs 15
--optimizer adam --lr 2e-3 --augment-shift 2 --seed 0``, reached 97.55% held-out here (2026-12-01), and the library's
``fit`` with this very recipe (Adam 3e-3, cosine decay set from a step callback, 15 epochs, shifts of 2, all 8,000
images) 97.75%: both below the 98.0% the microcontroller goal needs. Replace this script by the library trainer once
it reaches 98%.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "autograd_lab" / "export" / "pretrained" / "cnn_mnist.npz"


def main() -> int:
    import torch
    from torch import nn

    from autograd_lab.data import load_bundled_mnist

    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = load_bundled_mnist()
    x = torch.from_numpy(data.x_train.reshape(-1, 1, 28, 28))
    y = torch.from_numpy(data.y_train.astype(np.int64))
    xt = torch.from_numpy(data.x_test.reshape(-1, 1, 28, 28))
    yt = torch.from_numpy(data.y_test.astype(np.int64))
    net = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(784, 10))
    epochs, batch = 15, 64
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * (len(x) // batch + 1))
    gen = torch.Generator().manual_seed(0)
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            xb = x[idx]
            dy, dx = (int(v) for v in torch.randint(-2, 3, (2,), generator=gen))
            xb = torch.roll(xb, shifts=(dy, dx), dims=(2, 3))
            loss = nn.functional.cross_entropy(net(xb), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        net.eval()
        with torch.no_grad():
            acc = float((net(xt).argmax(1) == yt).float().mean())
        print(f"epoch {epoch + 1}: held-out accuracy {acc:.2%}")
    conv1, bn1, _, _, conv2, bn2, _, _, _, fc = net
    from autograd_lab.nn import CNN
    from autograd_lab.training import predict

    arrays = {"layers.0.weight": conv1.weight, "layers.1.weight": bn1.weight, "layers.1.bias": bn1.bias,
              "layers.1.stats.mean": bn1.running_mean, "layers.1.stats.var": bn1.running_var,
              "layers.4.weight": conv2.weight, "layers.5.weight": bn2.weight, "layers.5.bias": bn2.bias,
              "layers.5.stats.mean": bn2.running_mean, "layers.5.stats.var": bn2.running_var,
              "layers.9.weight": fc.weight, "layers.9.bias": fc.bias}
    model = CNN(channels=(8, 16), batch_norm=True, rng=0)
    model.load_state_dict({k: v.detach().numpy().astype(np.float32) for k, v in arrays.items()})
    model.eval()
    own = float(np.mean(predict(model, data.x_test) == data.y_test))
    meta = {"made_by": "examples/mcu/train_cnn.py", "trained_with": f"PyTorch {torch.__version__} (CPU, 1 thread)",
            "recipe": f"bundled MNIST 8000 train images, Adam lr 3e-3 cosine, batch 64, {epochs} epochs, "
                      "shifts <= 2 px, seed 0", "held_out_accuracy_pytorch": acc, "held_out_accuracy": own,
            "held_out": "the 2,000 bundled MNIST test images"}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    model.save(OUT, meta=meta)
    print(f"library CNN held-out accuracy {own:.2%}; wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
