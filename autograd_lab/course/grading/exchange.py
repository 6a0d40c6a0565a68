"""The plain data an exercise process hands the judge: encoded in the sandbox, parsed strictly by the judge.

A hidden test's exercise returns a dict of results. Only these values cross from the process that ran student
code to the judge:

- ``None``, ``bool``, ``int``, ``float`` (NaN and infinities included), ``str``;
- lists (tuples become lists) and dicts with ``str`` keys of such values;
- NumPy arrays of a bool, integer, float or complex dtype, and NumPy scalars of those dtypes (kept apart from
  0-d arrays, since an op's contract may ask for one and not the other), sent as ``.npy`` bytes.

Wire format: one line of JSON ``{"tree": ..., "blobs": [n0, n1, ...]}``, then the ``.npy`` blobs back to back (their
byte lengths listed in ``blobs``). Arrays and NumPy scalars appear in the tree as ``{"$array": i}`` and
``{"$scalar": i}``; non-finite floats as ``{"$float": "nan" | "inf" | "-inf"}``; a dict whose keys begin with ``$``
is refused, so nothing can pose as one of these markers.

:func:`decode` never imports, unpickles or executes anything: ``.npy`` blobs are read with ``allow_pickle=False``
and their dtype must be one of the kinds above (object, structured, string and void arrays are refused).
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np

#: Limits on what one test may send (bytes, items, nesting), far above what any course exercise returns.
MAX_BYTES = 32 * 1024 * 1024
MAX_ITEMS = 100_000
MAX_DEPTH = 32
MAX_STRING = 100_000
ALLOWED_KINDS = frozenset("biufc")  # bool, signed/unsigned integer, float, complex


class DataError(ValueError):
    """What an exercise returned is not plain data, or the bytes are not a well-formed message (says why)."""


def encode(value: Any) -> bytes:
    """Encode ``value`` (plain data as described in the module docstring) to bytes.

    Raises:
        DataError: naming the path of the first value that is not plain data (``results['y'][2]``), or when the
            message would pass :data:`MAX_BYTES`.
    """
    blobs: list[bytes] = []
    counter = [0]

    def walk(v: Any, path: str, depth: int) -> Any:
        counter[0] += 1
        if counter[0] > MAX_ITEMS:
            raise DataError(f"more than {MAX_ITEMS} values")
        if depth > MAX_DEPTH:
            raise DataError(f"{path}: nested deeper than {MAX_DEPTH}")
        if v is None or type(v) in (bool, str):
            if isinstance(v, str) and len(v) > MAX_STRING:
                raise DataError(f"{path}: a string longer than {MAX_STRING} characters")
            return v
        if type(v) is int:
            return v
        if type(v) is float:
            return v if math.isfinite(v) else {"$float": repr(v)}
        if isinstance(v, (np.ndarray, np.generic)):  # an ndarray subclass is sent as the plain array it holds
            if v.dtype.kind not in ALLOWED_KINDS:
                raise DataError(f"{path}: NumPy dtype {v.dtype} is not plain data (bool, int, float, complex only)")
            buf = io.BytesIO()
            np.save(buf, np.asarray(v), allow_pickle=False)
            blobs.append(buf.getvalue())
            return {("$scalar" if isinstance(v, np.generic) else "$array"): len(blobs) - 1}
        if type(v) in (list, tuple):
            return [walk(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(v)]
        if type(v) is dict:
            out = {}
            for key, item in v.items():
                if type(key) is not str:
                    raise DataError(f"{path}: dict keys must be str, got {type(key).__name__}")
                if key.startswith("$"):
                    raise DataError(f"{path}: dict keys may not begin with '$' ({key!r})")
                out[key] = walk(item, f"{path}[{key!r}]", depth + 1)
            return out
        raise DataError(f"{path}: a {type(v).__module__}.{type(v).__qualname__} is not plain data; return arrays "
                        f"(.data of a Variable), numbers, strings, lists or dicts of them")

    tree = walk(value, "results", 0)
    head = json.dumps({"tree": tree, "blobs": [len(b) for b in blobs]}, allow_nan=False).encode()
    data = head + b"\n" + b"".join(blobs)
    if len(data) > MAX_BYTES:
        raise DataError(f"the results take {len(data)} bytes, more than the limit of {MAX_BYTES}")
    return data


def _no_constants(name: str) -> Any:
    raise DataError(f"bare {name} in the JSON header (non-finite floats are sent as {{'$float': ...}})")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DataError(f"duplicate key {key!r}")
        out[key] = value
    return out


def decode(data: bytes) -> Any:
    """Parse bytes made by :func:`encode`, strictly; the inverse of :func:`encode` on plain data.

    Raises:
        DataError: on anything malformed, oversized, of a refused dtype, or with bytes left over.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise DataError("the message is not bytes")
    if len(data) > MAX_BYTES:
        raise DataError(f"the message has {len(data)} bytes, more than the limit of {MAX_BYTES}")
    end = data.find(b"\n")
    if end < 0:
        raise DataError("no header line")
    try:
        head = json.loads(data[:end].decode("utf-8"), parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"the header is not JSON ({type(exc).__name__})") from None
    if type(head) is not dict or set(head) != {"tree", "blobs"}:
        raise DataError("the header must hold exactly 'tree' and 'blobs'")
    sizes = head["blobs"]
    if type(sizes) is not list or not all(type(n) is int and n >= 0 for n in sizes):
        raise DataError("'blobs' must be a list of byte counts")
    if end + 1 + sum(sizes) != len(data):
        raise DataError("the blob lengths do not add up to the message's length")
    arrays: list[np.ndarray] = []
    offset = end + 1
    for n in sizes:
        arrays.append(_read_npy(bytes(data[offset:offset + n])))
        offset += n
    used: set[int] = set()
    counter = [0]

    def walk(v: Any, depth: int) -> Any:
        counter[0] += 1
        if counter[0] > MAX_ITEMS or depth > MAX_DEPTH:
            raise DataError("too many or too deeply nested values")
        if v is None or type(v) in (bool, int, float):
            return v
        if type(v) is str:
            if len(v) > MAX_STRING:
                raise DataError("a string is too long")
            return v
        if type(v) is list:
            return [walk(item, depth + 1) for item in v]
        if type(v) is dict:
            marked = [k for k in v if k.startswith("$")]
            if marked:
                if len(v) != 1:
                    raise DataError("a '$' marker must stand alone in its object")
                (key, arg), = v.items()
                if key == "$float":
                    if arg not in ("nan", "inf", "-inf"):
                        raise DataError("'$float' must be 'nan', 'inf' or '-inf'")
                    return float(arg)
                if key in ("$array", "$scalar"):
                    if type(arg) is not int or not 0 <= arg < len(arrays) or arg in used:
                        raise DataError(f"{key} refers to no blob, or to one already used")
                    used.add(arg)
                    arr = arrays[arg]
                    if key == "$scalar":
                        if arr.ndim != 0:
                            raise DataError("a '$scalar' blob must hold a 0-d array")
                        return arr[()]
                    return arr
                raise DataError(f"unknown marker {key!r}")
            return {k: walk(item, depth + 1) for k, item in v.items()}
        raise DataError("unexpected JSON value")

    tree = walk(head["tree"], 0)
    if len(used) != len(arrays):
        raise DataError("a blob is not referred to by the tree")
    return tree


def _read_npy(blob: bytes) -> np.ndarray:
    buf = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(buf)
        if version == (1, 0):
            _shape, _fortran, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version == (2, 0):
            _shape, _fortran, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            raise DataError(f"unsupported .npy version {version}")
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"a blob is not a .npy array ({type(exc).__name__})") from None
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise DataError(f"an array of dtype {dtype} is not plain data")
    buf.seek(0)
    try:
        arr = np.load(buf, allow_pickle=False)
    except Exception as exc:
        raise DataError(f"a blob could not be read as .npy ({type(exc).__name__})") from None
    if buf.tell() != len(blob):
        raise DataError("a blob has bytes after its array")
    if not isinstance(arr, np.ndarray):
        raise DataError("a blob did not hold an array")
    return arr
