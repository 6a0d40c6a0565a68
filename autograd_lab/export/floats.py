"""Exact float32 literals for C source.

Nine significant decimal digits identify every float32 uniquely (IEEE 754-2008 §5.12.2: a binary32 value needs
at most 9 digits to round-trip), so ``%.9g`` followed by ``f`` gives a literal that the C compiler turns back into
the very same bits. A literal always has a decimal point or an exponent, so ``1`` becomes ``1.0f`` and never the
invalid ``1f``.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.export.errors import ExportError


def f32_literal(value: float | np.floating) -> str:
    """The C literal of ``float32(value)``, e.g. ``0.100000001f`` for 0.1 and ``1.0f`` for 1.

    Raises:
        ExportError: if the value is NaN or infinite (C has no portable literal for them).
    """
    with np.errstate(over="ignore"):
        v = np.float32(value)
    if not np.isfinite(v):
        raise ExportError(f"cannot write {v} as a C constant")
    text = f"{float(v):.9g}"
    if not any(c in text for c in ".e"):
        text += ".0"
    return text + "f"


def check_finite(name: str, array: np.ndarray) -> None:
    """Raise ExportError naming the tensor if ``array`` holds NaN or inf (after conversion to float32)."""
    with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf, reported below
        a = np.asarray(array, dtype=np.float32)
    bad = ~np.isfinite(a)
    if bad.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad)[0]), a.shape)) if a.ndim else ()
        raise ExportError(
            f"tensor {name!r} (shape {a.shape}) holds {int(np.isnan(a).sum())} NaN and {int(np.isinf(a).sum())} "
            f"inf values as float32 (first at index {first}); a model with non-finite weights cannot be exported"
        )


def f32_array_body(array: np.ndarray, per_line: int = 8) -> str:
    """The comma-separated literals of a float32 array, ``per_line`` to a line, for a C initializer."""
    flat = np.asarray(array, dtype=np.float32).ravel()
    items = [f32_literal(v) for v in flat]
    return ",\n".join("    " + ", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line))
