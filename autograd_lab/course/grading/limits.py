"""The resource limits of one graded submission, their defaults, and where the instructor changes them.

Defaults live in the course configuration (``assignments/nbgrader_config.py``, section ``c.GradingLimits``);
``autograd-lab course autograde --limit NAME=VALUE`` overrides one for a run. Every limit is enforced outside the
student's reach: the wall-clock limits by the grader (which kills the whole sandbox) and by the in-sandbox harness
(which kills the test process), the others by the kernel (``setrlimit``, tmpfs size) before any student code runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIB = 1024**2


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. Units are in the field names (seconds, MiB, KiB, a count).

    Attributes:
        cell_seconds: wall clock for one cell (an answer cell, a demo cell, or one graded test).
        notebook_seconds: wall clock for the whole submission, sandbox start-up included; the grader then kills
            the sandbox, and the tests already decided keep their points.
        cpu_seconds: CPU time of each process in the sandbox (``RLIMIT_CPU``).
        memory_mb: address space of each process (``RLIMIT_AS``); the harness with NumPy and autograd_lab maps
            about 0.6 GiB before any student code runs.
        processes: processes the sandbox may start beyond the harness's own (``RLIMIT_NPROC``, counted per user).
        file_mb: size of any one file written (``RLIMIT_FSIZE``).
        scratch_mb: size of the private scratch directory ``/tmp`` (a tmpfs), the only writable place.
        output_kb: total bytes of outputs kept for the whole notebook, every MIME type counted (text, images,
            HTML); output beyond it is dropped with a note.
    """

    cell_seconds: float = 60.0
    notebook_seconds: float = 600.0
    cpu_seconds: int = 300
    memory_mb: int = 3072
    processes: int = 64  # threads count too (RLIMIT_NPROC, the pids cgroup): a default thread pool must fit
    file_mb: int = 16
    scratch_mb: int = 64
    output_kb: int = 2048

    def replace(self, **changes: Any) -> Limits:
        """A copy with ``changes`` (field name -> value); ``None`` values are ignored.

        Raises:
            ValueError: naming an unknown limit or a value that is not positive.
        """
        known = {f.name: f.type for f in dataclasses.fields(self)}
        clean: dict[str, Any] = {}
        for name, value in changes.items():
            if value is None:
                continue
            if name not in known:
                raise ValueError(f"unknown grading limit {name!r}; known: {', '.join(known)}")
            kind = float if name.endswith("seconds") and name != "cpu_seconds" else int
            try:
                number = kind(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"grading limit {name} must be a number, got {value!r}") from exc
            if number <= 0:
                raise ValueError(f"grading limit {name} must be positive, got {value!r}")
            clean[name] = number
        return dataclasses.replace(self, **clean)

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def course_limits(course_dir: Path) -> Limits:
    """The limits configured in ``course_dir/nbgrader_config.py`` (``c.GradingLimits.<name> = value``).

    ``c.Execute.timeout`` is read as ``cell_seconds`` when ``GradingLimits.cell_seconds`` is not set, so an older
    configuration keeps its per-cell timeout.

    Raises:
        ValueError: for an unknown name or a bad value in the configuration.
    """
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    values: dict[str, Any] = {}
    if "Execute" in config and "timeout" in config.Execute:
        values["cell_seconds"] = config.Execute.timeout
    if "GradingLimits" in config:
        values.update(dict(config.GradingLimits))
    return Limits().replace(**values)


def parse_overrides(items: list[str]) -> dict[str, str]:
    """``["memory_mb=2048", ...]`` -> ``{"memory_mb": "2048"}``.

    Raises:
        ValueError: for an item without ``=``.
    """
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--limit expects NAME=VALUE, got {item!r}")
        out[name.strip().replace("-", "_")] = value.strip()
    return out
