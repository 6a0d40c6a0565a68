"""Text for graph drawings: safe escaping for Graphviz HTML-like labels, and short summaries of arrays.

Graphviz HTML-like labels (https://graphviz.org/doc/info/shapes.html#html) are XML, so ``&``, ``<``, ``>`` and
quotes must become entities, and control characters are not allowed at all. Graphviz also expands backslash escapes
such as ``\\N`` (the node name) inside them, even when the backslash is written as an entity, so a literal backslash
is doubled. A newline becomes ``<BR/>``, which is only valid inside a table cell or a label's top level.
"""

from __future__ import annotations

import html
import re

import numpy as np

#: Arrays with at most this many elements are shown in full; larger ones as min / mean / max.
SMALL_ARRAY = 6

_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def escape_label(text: str, max_chars: int = 60) -> str:
    """Return ``text`` as the content of a Graphviz HTML-like label: the same characters, shown literally.

    Args:
        text: any string (names chosen by users may hold ``<``, ``&``, quotes, backslashes, newlines, emoji).
        max_chars: longer text is cut and ends with an ellipsis, so one long name cannot stretch the drawing.

    Returns:
        Markup safe to place between ``<TD>`` and ``</TD>``: entities for ``& < > " '``, doubled backslashes,
        ``<BR/>`` for newlines, ``\\xNN`` for control characters and lone surrogates (which XML cannot carry).
    """
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    text = text.replace("\r\n", "\n").replace("\t", " ")
    text = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    text = html.escape(text.replace("\\", "\\\\"), quote=True)
    return text.replace("\n", "<BR/>")


def format_number(x: float) -> str:
    """Four significant digits, the same on every machine: ``0.3333``, ``1.235e+05``, ``nan``, ``-inf``."""
    return f"{x:.4g}"


def summarize(array: np.ndarray, small: int = SMALL_ARRAY) -> str:
    """A one- or few-line text summary of an array's values (plain text; escape it before use in a label).

    Up to ``small`` elements are written out (``[1, 2.5, nan]``, nested brackets for 2-D); larger arrays are shown as
    ``min … mean … max …`` over the finite elements, followed by the count of NaN and inf elements if there are any.
    """
    a = np.asarray(array)
    if a.size <= small:
        if a.ndim == 0:
            return format_number(float(a))
        return np.array2string(a, separator=", ", formatter={"float_kind": lambda v: format_number(float(v))})
    finite = np.isfinite(a)
    n_finite = int(finite.sum())
    parts = []
    if n_finite == a.size:
        parts.append(f"min {format_number(a.min())}  mean {format_number(a.mean())}  max {format_number(a.max())}")
    elif n_finite:
        f = a[finite]
        parts.append(f"min {format_number(f.min())}  mean {format_number(f.mean())}  max {format_number(f.max())}")
    n_nan = int(np.isnan(a).sum())
    n_inf = a.size - n_finite - n_nan
    if n_nan:
        parts.append(f"{n_nan} NaN")
    if n_inf:
        parts.append(f"{n_inf} inf")
    return "  ".join(parts)


def is_nonfinite(array: np.ndarray) -> bool:
    """True if any element is NaN or ±inf."""
    return not bool(np.isfinite(array).all())


def format_config_value(value: object) -> str:
    """An operator setting as short text: arrays by shape and dtype, everything else by ``repr`` (cut to 30 chars)."""
    if isinstance(value, np.ndarray):
        return f"array{value.shape} {value.dtype}"
    text = repr(value)
    return text if len(text) <= 30 else text[:29] + "…"
