"""How much memory optimizer steps allocate, measured with tracemalloc."""

from __future__ import annotations

import tracemalloc
from typing import Any


def peak_bytes_of_steps(optimizer: Any, steps: int = 5) -> int:
    """Run one warm-up step (it may fill state buffers), then return the peak bytes allocated by ``steps`` more."""
    optimizer.step()
    tracemalloc.start()
    try:
        for _ in range(steps):
            optimizer.step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
