"""Run the exercise process in a bubblewrap sandbox, feed it one job in two parts and read its report.

The sandbox (``bwrap``, the sandbox Flatpak uses; see ``man bwrap``) sees, read-only: ``/usr`` (with the
merged-usr links), the Python installation and the virtualenv, and the chapter's *stubbed* copy of ``autograd_lab``
(:mod:`autograd_lab.course.grading.stubs`, at ``/opt/autograd-lab``; never the repository nor the real package).
Other autodiff libraries (:data:`MASKED`) and any installed copy of ``autograd_lab`` in site-packages are covered by
empty read-only mounts, and the editable install's path hook by an empty file. Its only writable place is a
private, size-limited tmpfs at ``/tmp``. It has every namespace unshared (no network, its own pid namespace so it
cannot see or signal the grader) and may not create more (``--disable-userns``, no capabilities), a new session (no
terminal), a cleared environment, and runs as uid/gid 65534 even when the grader is root; it dies with the grader
(``--die-with-parent``). There is no ``/proc``. The job never touches a disk: it arrives on stdin.

Two-phase job (:mod:`autograd_lab.course.grading.exercise`): the grader writes the public part, reads the feedback
outputs until ``public_done``, and only then writes the secret part (seeds and hidden parts). Outputs reported after
that are ignored, so no process that saw a secret can write feedback.

Without bubblewrap the harness can run as a plain child process (``unsafe=True``): the same limits and the stubbed
package, none of the isolation. :func:`autograd_lab.course.instructor.autograde` only allows that with
``--unsafe-no-sandbox``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import glob
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograd_lab.course.grading import exchange, launch
from autograd_lab.course.grading.limits import MIB, Limits
from autograd_lab.course.grading.wire import frame

PACKAGE_MOUNT = "/opt/autograd-lab"
SANDBOX_UID = 65534  # nobody
#: Top-level names hidden in every site-packages folder: other autodiff libraries, and installed autograd_lab copies.
MASKED = ("torch", "functorch", "torchgen", "jax", "jaxlib", "autograd", "tensorflow", "mxnet", "tinygrad",
          "micrograd", "sympy", "autograd_lab")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here; the message says which."""


@dataclass
class RunResult:
    """What came back from one sandbox run.

    Attributes:
        outputs: cell index -> ``{"outputs": [...], "error": {...} | None}`` from the feedback run (public part).
        public_done: the public part's report ended normally (the secret part was then sent).
        results: graded test grade_id -> the bytes its exercise sent, or None (nothing came back).
        stubbed: grade_ids whose hidden part stopped in one of the chapter's stubs (as the exercise process says:
            it only chooses the message of a test that already failed).
        finished: the harness reported ``done``.
        killed_at_limit: the grader killed the sandbox at the notebook limit.
        truncated: the feedback outputs passed the output budget.
    """

    outputs: dict[int, dict[str, Any]] = field(default_factory=dict)
    public_done: bool = False
    results: dict[str, bytes | None] = field(default_factory=dict)
    stubbed: set[str] = field(default_factory=set)
    finished: bool = False
    killed_at_limit: bool = False
    truncated: bool = False
    exit_status: int | None = None
    stderr: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # as the harness reported it (a benchmark figure, not trusted)


def _real(path: str) -> str:
    return os.path.realpath(path)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """None when bubblewrap works on this machine, else why not (one line); checked once per process."""
    exe = bwrap_path()
    if exe is None:
        return "bubblewrap (bwrap) is not installed (Debian package 'bubblewrap'; scripts/install_system_packages.sh)"
    argv = [*_bwrap_args(exe, Limits(), None), "/bin/true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not be started: {exc}"
    if proc.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {proc.stderr.strip()[:300]}"
    return None


def _site_dirs() -> list[Path]:
    """Every package folder the sandbox mounts: the virtualenv's, the base interpreter's (a virtualenv lists only its
    own in ``site.getsitepackages``), the user's, and the system's under /usr."""
    paths = [*site.getsitepackages(), site.getusersitepackages()]
    for scheme_vars in ({"base": sys.base_prefix, "platbase": sys.base_prefix}, {}):
        paths += [sysconfig.get_paths(vars=scheme_vars or None)[key] for key in ("purelib", "platlib")]
    for pattern in ("/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
                    "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                    "/usr/lib/python3/dist-packages"):
        paths += glob.glob(pattern)
    dirs = {Path(_real(p)) for p in paths}
    return sorted(d for d in dirs if d.is_dir())


MASK_INIT = ('raise ImportError(f"{__name__} is not available while grading: the course\'s answers are written with "\n'
             '                  f"NumPy and autograd_lab only")\n')


def _mask_folder(cache: Path) -> Path:
    """A package folder whose ``__init__`` raises ImportError (an empty folder would import as a namespace package)."""
    folder = cache / "masked"
    init = folder / "__init__.py"
    if not init.is_file() or init.read_text(encoding="utf-8") != MASK_INIT:
        folder.mkdir(parents=True, exist_ok=True)
        init.write_text(MASK_INIT, encoding="utf-8")
        os.chmod(folder, 0o755)
        os.chmod(init, 0o644)
    return folder


def masks(cache: Path) -> list[str]:
    """bwrap arguments that hide :data:`MASKED` packages (each replaced by a package that raises ImportError) and
    the editable install's hooks (each replaced by an empty file) in every site-packages folder."""
    # Checking every entry costs ~13 ms of the grader's serial CPU per sandbox: the arguments are kept while each
    # folder holds the same names with the same mtime (a package installed or removed changes both).
    folders = tuple((str(folder), folder.stat().st_mtime_ns, tuple(sorted(os.listdir(folder))))
                    for folder in _site_dirs())
    return list(_masks(str(cache), folders))


@functools.lru_cache(maxsize=16)
def _masks(cache: str, folders: tuple[tuple[str, int, tuple[str, ...]], ...]) -> tuple[str, ...]:
    args: list[str] = []
    for folder, _, names in folders:
        for entry in [Path(folder) / n for n in names]:
            name = entry.name
            if entry.is_dir() and name in MASKED:
                args += ["--ro-bind", str(_mask_folder(Path(cache))), str(entry)]
            elif entry.is_file() and (name.split(".")[0] in MASKED or (name.startswith("__editable__") and
                                                                        "autograd_lab" in name)):
                args += ["--ro-bind", "/dev/null", str(entry)]
    return tuple(args)


def _bwrap_args(exe: str, limits: Limits, package: Path | None) -> list[str]:
    python_home = _real(sys.base_prefix)
    venv = _real(sys.prefix)
    args = [
        exe,
        "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
        "--die-with-parent", "--new-session", "--clearenv",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        # The scratch first: binds below it (a checkout or virtualenv that lives under /tmp) stay visible.
        "--size", str(int(limits.scratch_mb) * MIB), "--perms", "1777", "--tmpfs", "/tmp",
        "--ro-bind", "/usr", "/usr",
        "--ro-bind", python_home, python_home,
    ]
    if venv != python_home:
        args += ["--ro-bind", venv, venv]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            args += ["--ro-bind", str(target), str(target)]
    if package is not None:  # the stubbed copy lives in the grader's cache: <cache>/stubs/<key>/autograd_lab
        args += masks(package.parents[2])
        args += ["--ro-bind", str(package), f"{PACKAGE_MOUNT}/autograd_lab"]
    args += [
        "--ro-bind-try", "/etc/fonts", "/etc/fonts",
        "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--dev", "/dev",
        # bwrap's /dev has a writable shm of its own, outside the scratch budget: cover it with a tiny tmpfs.
        "--size", str(MIB), "--perms", "1777", "--tmpfs", "/dev/shm",
        "--chdir", "/tmp",
        "--setenv", "PYTHONPATH", PACKAGE_MOUNT,
        "--setenv", "HOME", "/tmp",
        "--setenv", "MPLBACKEND", "agg",
        "--setenv", "MPLCONFIGDIR", "/tmp/.matplotlib",
        "--setenv", "OPENBLAS_NUM_THREADS", "1",
        "--setenv", "OMP_NUM_THREADS", "1",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "PYTHONHASHSEED", "0",
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        # The root bwrap makes is a tmpfs of its own, outside the scratch budget: read-only, as everything but /tmp.
        "--remount-ro", "/",
    ]
    return args


def sandbox_command(package: Path, limits: Limits, argv: list[str]) -> list[str]:
    """``argv`` (a command inside the sandbox) wrapped in bwrap with ``package`` as its ``autograd_lab``.

    Raises:
        SandboxUnavailable: if bubblewrap is not installed.
    """
    exe = bwrap_path()
    if exe is None:
        raise SandboxUnavailable(sandbox_problem() or "bubblewrap is not installed")
    return [*_bwrap_args(exe, limits, package), *argv]


def harness_command(package: Path, limits: Limits, unsafe: bool = False) -> list[str]:
    """The argv that starts the exercise process, in the sandbox unless ``unsafe``."""
    python = os.path.join(_real(sys.prefix), "bin", "python") if not unsafe else sys.executable
    # -P: the working directory (the writable scratch) is not put on sys.path, so a planted module is never imported.
    run = [python, "-B", "-s", "-P", "-m", "autograd_lab.course.grading.exercise"]
    return run if unsafe else sandbox_command(package, limits, run)


def _unsafe_env(package: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("TMPDIR", "/tmp"), "PYTHONPATH": str(package.parent),
            "MPLBACKEND": "agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1"}


def run_job(public: list[dict[str, Any]], secret: dict[str, Any], package: Path, limits: Limits, *,
            unsafe: bool = False, nice: int = 10, feedback_package: Path | None = None,
            feedback_only: list[int] | None = None) -> RunResult:
    """Run one submission: send ``public`` (the cells, :meth:`Job.public_cells`), collect the feedback outputs, then
    send ``secret`` (``{"seeds", "tests"}``) and collect each test's bytes. Never raises for anything the
    submission does.

    With ``feedback_package`` (an unstubbed copy of the library), the feedback run happens in a sandbox of its own
    that gets that copy and no secret part, as the learner's Jupyter has the whole library: demo cells and visible
    tests that use a library part the chapter's answers re-implement then run as they do for the learner. The graded
    run gets ``package`` (the stubbed copy) and skips the feedback run. ``package`` alone: both in one sandbox.

    Each sandbox is killed (its process group) at ``limits.notebook_seconds``; what was received before that is
    kept. ``nice`` lowers the sandbox's priority so a busy submission cannot slow the grader. The graded part skips
    the cells in ``feedback_only`` (:meth:`Job.feedback_only`).
    """
    if feedback_package is None:
        return _run(public, secret, package, limits, unsafe, nice, feedback=True, skip=feedback_only)
    shown = _run(public, {"seeds": {}, "tests": []}, feedback_package, limits, unsafe, nice, feedback=True)
    # Answer cells that ran past their limit there are not run again: the same code with no secret yet would only
    # spend another cell_seconds (the list can only make the graded run do less, never earn a point).
    timed_out = sorted(i for i, shown_cell in shown.outputs.items()
                       if (shown_cell.get("error") or {}).get("ename") == "CellTimeoutError")
    graded = _run(public, secret, package, limits, unsafe, nice, feedback=False,
                  skip=sorted({*timed_out, *(feedback_only or [])}))
    graded.outputs, graded.truncated, graded.public_done = shown.outputs, shown.truncated, shown.public_done
    graded.seconds += shown.seconds
    graded.cpu_seconds += shown.cpu_seconds
    graded.killed_at_limit = graded.killed_at_limit or shown.killed_at_limit
    return graded


def _run(public: list[dict[str, Any]], secret: dict[str, Any], package: Path, limits: Limits, unsafe: bool,
         nice: int, feedback: bool, skip: list[int] | None = None) -> RunResult:
    """One sandbox run of the exercise process (see :func:`run_job`)."""
    # In the sandbox RLIMIT_NPROC counts the processes of its own user namespace; unsafe, all of the uid's.
    lims = {**limits.as_dict(), "nproc_base": launch.uid_processes() if unsafe else 0}
    env = _unsafe_env(package) if unsafe else {}
    start = time.monotonic()
    result = RunResult()
    # + bwrap, its init, the harness, and a feedback or test child
    group = launch.pids_cgroup(int(limits.processes) + 4)
    prefix, preexec = launch.launcher(group, nice)
    proc = subprocess.Popen([*prefix, *harness_command(package, limits, unsafe)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
                            preexec_fn=preexec, close_fds=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    err_chunks: list[bytes] = []
    stderr = proc.stderr
    err_thread = threading.Thread(target=lambda: err_chunks.append(stderr.read(64 * 1024)), daemon=True)
    err_thread.start()
    timer = threading.Timer(limits.notebook_seconds, _kill_group, args=(proc, result))
    timer.start()
    tags = {str(t["grade_id"]) for t in secret["tests"]}
    try:
        _send(proc, frame({"limits": lims, "cells": public, "feedback": feedback, "skip": skip or []}))
        budget = int(limits.output_kb) * 1024 * 2 + 4 * MIB  # JSON overhead of the harness's own clipped output
        budget += len(tags) * (exchange.MAX_BYTES * 4 // 3 + 1024)
        received = 0
        for line in proc.stdout:
            received += len(line)
            if received > budget:
                _kill_group(proc, result)
                break
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                _take(record, result, tags)
                if record.get("event") == "public_done" and not result.public_done:
                    result.public_done = True
                    _send(proc, frame(secret), close=True)
        proc.wait()
    finally:
        timer.cancel()
        try:  # whatever the submission left behind in the sandbox's process group goes with it
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        if group is not None:
            launch.remove_cgroup(group)
    err_thread.join(timeout=1)
    result.exit_status = proc.returncode
    result.stderr = b"".join(err_chunks).decode("utf-8", "replace")
    result.seconds = time.monotonic() - start
    return result


def _send(proc: subprocess.Popen, data: bytes, close: bool = False) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
        if close:
            proc.stdin.close()
    except (BrokenPipeError, ValueError):
        pass


def _take(record: dict[str, Any], result: RunResult, tags: set[str]) -> None:
    """Keep one report record if it belongs to the current phase: outputs before ``public_done``, results after
    (the first result per test counts)."""
    event = record.get("event")
    if not result.public_done:
        if event == "outputs" and isinstance(record.get("index"), int) and record["index"] not in result.outputs:
            result.outputs[record["index"]] = {"outputs": record.get("outputs") or [], "error": record.get("error")}
        elif event == "public_done":
            result.truncated = record.get("truncated") is True
        return
    if event == "result":
        tag = record.get("grade_id")
        if tag not in tags or tag in result.results:
            return
        data = record.get("data")
        if record.get("stub") is True:
            result.stubbed.add(str(tag))
        try:
            result.results[tag] = None if data is None else base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            result.results[tag] = b""  # not readable: the judge says it is not plain data
    elif event == "done":
        result.finished = True
        cpu = record.get("cpu_seconds")
        result.cpu_seconds = float(cpu) if isinstance(cpu, (int, float)) else 0.0


def _kill_group(proc: subprocess.Popen, result: RunResult) -> None:
    if proc.poll() is None:
        result.killed_at_limit = True
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
