"""CPU time of this process and every process it starts, as the kernel counts it (a cgroup v1 ``cpuacct`` group).

``getrusage`` misses much of a grading batch: the sandboxed processes are reaped inside bubblewrap's own pid
namespace (their time never reaches the grader's ``RUSAGE_CHILDREN``) and the judge's snapshot processes outlive
their parent. A cpuacct group counts every task that runs in it, and children inherit the group, so moving the
benchmark into a fresh group counts them all. Where no writable cpuacct hierarchy exists (no root, cgroup v2 only),
:func:`open_meter` returns None and the benchmark falls back to what ``getrusage`` and the harnesses report.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path("/sys/fs/cgroup/cpuacct")


class CpuMeter:
    """A cpuacct group holding this process (and so its future children); :meth:`seconds` is their CPU time."""

    def __init__(self, group: Path, previous: Path) -> None:
        self.group = group
        self.previous = previous

    def seconds(self) -> float:
        """CPU seconds (user + system) used in the group since it was made."""
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        """Move this process back to its previous group and remove the meter's (best effort: a straggler that is
        still in it keeps it alive until it ends)."""
        try:
            (self.previous / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()
        except OSError:
            pass


def _own_group() -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            return ROOT / path.lstrip("/")
    return ROOT


def open_meter() -> CpuMeter | None:
    """A meter for this process tree, or None where cpuacct groups cannot be made here."""
    if not (ROOT / "cgroup.procs").exists() or not os.access(ROOT, os.W_OK):
        return None
    try:
        previous = _own_group()
        group = previous / f"bench-grading-{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return CpuMeter(group, previous)
