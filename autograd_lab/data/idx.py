"""Read and write IDX files, the format MNIST and Fashion-MNIST ship in.

Layout (from the MNIST page of LeCun, Cortes and Burges, "FILE FORMATS FOR THE MNIST DATABASE")::

    bytes 0-1   0x00 0x00
    byte  2     dtype code: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64
    byte  3     number of dimensions d
    4*d bytes   each dimension's size, a big-endian uint32
    the rest    the values, big-endian, C order (last index fastest)

Files may be gzip-compressed; a file is treated as gzip when it starts with the gzip magic bytes 1f 8b, whatever
its name says.
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from autograd_lab.data.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"

# IDX dtype code -> big-endian NumPy dtype of the stored values.
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_CODES = {dtype.newbyteorder("="): code for code, dtype in IDX_DTYPES.items()}


def _read_bytes(path: Path) -> bytes:
    """The file's content, gunzipped when it starts with the gzip magic bytes."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read IDX file ({exc.strerror or exc})") from exc
    if not raw.startswith(GZIP_MAGIC):
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: corrupt gzip stream ({exc}); delete the file and fetch it again") from exc


def read_idx(path: str | os.PathLike[str], ndim: int | None = None) -> np.ndarray:
    """Read one IDX file (raw or gzip-compressed) into an array.

    Args:
        path: the file. Compression is detected from its first bytes, not from its name.
        ndim: the number of dimensions the caller expects (3 for an image file, 1 for a label file), or None to
            accept any.

    Returns:
        An array of the declared shape in native byte order; dtype from the header's code (uint8 for MNIST and
        Fashion-MNIST). A uint8 result is a read-only view of the file's bytes.

    Raises:
        DataError: naming the file, when it cannot be read, the gzip stream is corrupt, the magic number is not
            IDX, the dtype code is unknown, the dimension count differs from ``ndim``, the header is cut short, or
            the payload is shorter (truncated) or longer (extra bytes) than the declared sizes need.
    """
    path = Path(path)
    content = _read_bytes(path)
    if len(content) < 4:
        raise DataError(f"{path}: {len(content)} bytes is too short for the 4-byte IDX magic number")
    zero, code, dims = struct.unpack(">HBB", content[:4])
    if zero != 0:
        raise DataError(
            f"{path}: bad magic number 0x{content[:4].hex()}: an IDX file starts with two zero bytes "
            "(for example 0x00000803 for images, 0x00000801 for labels)"
        )
    if code not in IDX_DTYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_DTYPES)
        raise DataError(f"{path}: bad magic number 0x{content[:4].hex()}: unknown dtype code 0x{code:02X} "
                        f"(known: {known})")
    if ndim is not None and dims != ndim:
        raise DataError(f"{path}: wrong number of dimensions: header says {dims}, expected {ndim}")
    header = 4 + 4 * dims
    if len(content) < header:
        raise DataError(f"{path}: truncated header: {dims} dimensions need {header} bytes, file has "
                        f"{len(content)}")
    shape = struct.unpack(f">{dims}I", content[4:header])
    dtype = IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(content) - header
    if actual != expected:
        what = "truncated" if actual < expected else "extra bytes"
        raise DataError(f"{path}: {what}: shape {shape} of {dtype.name} needs {expected} data bytes, "
                        f"file has {actual}")
    values = np.frombuffer(content, dtype=dtype, offset=header).reshape(shape)
    return values if dtype.itemsize == 1 else values.astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike[str], array: np.ndarray, compress: bool | None = None) -> Path:
    """Write an array as an IDX file.

    Args:
        path: destination file.
        array: at least one dimension; dtype uint8, int8, int16, int32, float32 or float64.
        compress: gzip the file; None means "when the name ends in .gz". The gzip header carries no time stamp,
            so the same array always gives the same bytes.

    Returns:
        The path written.

    Raises:
        DataError: when the array's dtype has no IDX code, it has no dimension, or a dimension exceeds 2**32 - 1.
    """
    path = Path(path)
    array = np.asarray(array)
    code = _CODES.get(array.dtype.newbyteorder("="))
    if code is None:
        raise DataError(f"{path}: dtype {array.dtype} has no IDX code (use one of uint8, int8, int16, int32, "
                        "float32, float64)")
    if array.ndim == 0 or array.ndim > 255 or any(n >= 2**32 for n in array.shape):
        raise DataError(f"{path}: shape {array.shape} cannot be stored in IDX (1 to 255 dimensions, each < 2**32)")
    header = struct.pack(f">HBB{array.ndim}I", 0, code, array.ndim, *array.shape)
    payload = header + np.ascontiguousarray(array, dtype=IDX_DTYPES[code]).tobytes()
    if compress is None:
        compress = path.name.endswith(".gz")
    if compress:
        payload = gzip.compress(payload, compresslevel=9, mtime=0)
    path.write_bytes(payload)
    return path
