"""How a sandbox's first process is started: at a lower priority, inside a pids cgroup of its own.

Used by :func:`autograd_lab.course.grading.sandbox.run_job`. ``RLIMIT_NPROC`` does not bind a grader running as root,
so where the pids controller is writable each sandbox gets a cgroup whose ``pids.max`` caps all of its processes.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path


def uid_processes() -> int:
    """How many processes the grader's real uid has now: RLIMIT_NPROC counts them all, in or out of the sandbox."""
    uid = os.getuid()
    count = 0
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        count += 1
                except OSError:
                    continue
    except OSError:
        return 0
    return count


@functools.lru_cache(maxsize=1)
def launch_tools() -> tuple[str, str] | None:
    sh, nice = shutil.which("sh", path="/usr/bin:/bin"), shutil.which("nice", path="/usr/bin:/bin")
    return (sh, nice) if sh and nice else None


def launcher(group: Path | None, nice: int) -> tuple[list[str], Callable[[], None] | None]:
    """(argv prefix, preexec_fn) that put the sandbox's first process into ``group`` and lower its priority by
    ``nice`` before it execs ``bwrap``, so that every process of the sandbox starts there.

    The prefix (``sh`` writes its own pid into the cgroup, then execs ``nice``, which execs the sandbox) lets
    ``subprocess`` start the child with vfork; a ``preexec_fn`` forces a full fork of the grader, whose copied page
    tables and copy-on-write faults cost ~10 ms of CPU per submission, in the serial part of a batch. Where ``sh``
    or ``nice`` is missing the preexec_fn does the same. As before, a cgroup that cannot be joined is skipped.
    """
    tools = launch_tools()
    if tools is not None:
        sh, nice_exe = tools
        lower = [nice_exe, "-n", str(nice)]
        if group is None:
            return lower, None
        return [sh, "-c", 'echo $$ > "$0" 2>/dev/null; exec "$@"', str(group / "cgroup.procs"), *lower], None

    def lower_priority() -> None:
        os.nice(nice)
        if group is not None:
            try:
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                pass

    return [], lower_priority


def pids_cgroup(limit: int) -> Path | None:
    """A fresh cgroup whose ``pids.max`` caps every process of one sandbox, or None where none can be made.

    ``RLIMIT_NPROC`` does not bind a grader running as root (the kernel exempts the root user, and the sandbox's
    uid maps to it), so where the pids controller is writable (cgroup v1 ``/sys/fs/cgroup/pids`` or v2) the
    sandbox also goes into its own cgroup; elsewhere the rlimit and the static check are what limit processes.
    """
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if not (root / "cgroup.procs").exists() or not os.access(root, os.W_OK):
            continue
        group = root / f"autograd-lab-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(limit))
        except OSError:
            remove_cgroup(group)
            continue
        return group
    return None


def remove_cgroup(group: Path, patience: float = 1.0) -> None:
    """Kill whatever is still in the cgroup (a process that left the session, in unsafe mode) and remove it,
    trying for ``patience`` seconds.

    The killed processes take a few ms to leave; the retries start at 0.5 ms and back off to 20 ms, so a worker
    does not sit idle for a fixed 20 ms after every submission (it did: ~3% of a batch's wall clock).
    """
    deadline = time.monotonic() + patience
    delay = 0.0005
    while True:
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(delay)  # the killed processes are still leaving
            delay = min(2 * delay, 0.02)
