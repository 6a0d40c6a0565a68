"""How the grader, the exercise process and the judge talk: framed JSON on pipes, read without reading ahead.

A *frame* is ``<byte count>\\n<JSON>``. :func:`read_frame` takes exactly one frame from a descriptor, so the
exercise process never holds the secret part of its job in memory before it asks for it. Reports go the other way
as JSON lines (:func:`write_all`, :func:`read_until`).
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable
from typing import Any

MAX_HEADER = 20  # digits of a frame's byte count


def frame(value: Any) -> bytes:
    """The bytes of one frame holding ``value`` (JSON)."""
    data = json.dumps(value).encode()
    return f"{len(data)}\n".encode() + data


def read_frame(fd: int) -> Any:
    """One frame from ``fd``, read byte-exact (nothing after it is read).

    Raises:
        ValueError: on a malformed frame or an early end of file.
    """
    head = b""
    while not head.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte or len(head) > MAX_HEADER:
            raise ValueError("malformed frame header, or end of input")
        head += byte
    left = int(head)
    chunks = []
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ValueError("frame cut short")
        chunks.append(chunk)
        left -= len(chunk)
    return json.loads(b"".join(chunks))


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (unbuffered)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_until(fd: int, deadline: float, enough: Callable[[list[bytes], int], bool]) -> bytes:
    """Read ``fd`` until end of file, ``enough(chunks, total bytes)`` or ``deadline`` (``time.monotonic``)."""
    chunks: list[bytes] = []
    size = 0
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if enough(chunks, size):
            break
    return b"".join(chunks)
