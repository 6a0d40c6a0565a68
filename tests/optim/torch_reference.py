"""Run one of our optimizers and its torch.optim counterpart side by side on the same gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab import Parameter


def run_side_by_side(
    ours_cls: Callable[..., Any],
    torch_cls: Callable[..., Any],
    kwargs: dict[str, Any],
    shapes: list[tuple[int, ...]],
    seed: int,
    steps: int = 5,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Apply ``steps`` random float32 gradients to both optimizers from the same start; return both final values."""
    import torch

    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(steps)]
    ours = [Parameter(a) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt, topt = ours_cls(ours, **kwargs), torch_cls(theirs, **kwargs)
    for step in grads:
        for p, t, g in zip(ours, theirs, step):
            p.grad, t.grad = g.copy(), torch.from_numpy(g.copy())
        opt.step()
        topt.step()
    return [p.data for p in ours], [t.detach().numpy() for t in theirs]
