"""The sandbox and the harness on their own: isolation, each limit, and verdicts that displayed output cannot forge.

The jobs here are written by hand and given to :func:`sandbox.run_job` directly, past the static check of answer
cells: the sandbox is the second line of defence and must hold even for code the static check would refuse.
Each property is probed by one graded test cell; one sandbox run serves many assertions (module fixtures).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.course.grading import batch, sandbox
from autograd_lab.course.grading.limits import Limits

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox.sandbox_problem() is not None, reason=f"no sandbox: {sandbox.sandbox_problem()}"),
]

MARK = "sleep-left-behind-by-a-submission"


def job(*cells: tuple[str, str], seeds: dict[str, int] | None = None) -> dict:
    """cells: (kind, source) with kind helper, demo or test (graded)."""
    return {"cells": [{"index": i, "kind": kind, "grade_id": f"c{i}", "source": src, "graded": kind == "test"}
                      for i, (kind, src) in enumerate(cells)], "seeds": seeds or {}}


def verdicts(result: sandbox.RunResult) -> dict[int, dict]:
    return {r["index"]: r for r in result.records if r.get("event") == "test"}


def text(record: dict) -> str:
    return "".join(o.get("text", "") for o in record["outputs"] if o["output_type"] == "stream")


def probe_open(path: str, mode: str = "r") -> str:
    return (f"try:\n    with open({path!r}, {mode!r}) as f:\n        f.{'read' if mode == 'r' else 'write'}"
            f"({'' if mode == 'r' else repr('tampered')})\n    print('REACHED')\n"
            f"except OSError as e:\n    print('blocked', type(e).__name__)\n")


@pytest.fixture(scope="module")
def isolation(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("isolation")
    course = tmp / "course"
    secret_source = course / "source" / "a" / "a.ipynb"
    other = course / "submitted" / "other_student" / "a" / "a.ipynb"
    gradebook = course / "gradebook.db"
    for path in (secret_source, other, gradebook):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("INSTRUCTOR ONLY", encoding="utf-8")
    package_init = Path(sandbox.autograd_lab.__file__).resolve()
    before = package_init.read_bytes()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        for _ in range(100):
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    home = Path.home()
    cells = [
        ("test", probe_open(str(secret_source))),
        ("test", probe_open(str(other))),
        ("test", probe_open(str(gradebook), "a")),
        ("test", probe_open(f"{sandbox.PACKAGE_MOUNT}/autograd_lab/__init__.py", "a")),
        ("test", probe_open(str(package_init), "a")),
        ("test", f"import os\ntry:\n    print(os.listdir({str(course)!r}))\nexcept OSError as e:\n"
                 f"    print('blocked', type(e).__name__)\n"),
        ("test", f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
                 f"    print('REACHED')\nexcept OSError as e:\n    print('blocked', type(e).__name__)\n"),
        ("test", f"import os, signal\ntry:\n    os.kill({os.getpid()}, signal.SIGTERM)\n    print('REACHED')\n"
                 f"except OSError as e:\n    print('blocked', type(e).__name__)\n"),
        ("test", f"import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'exec -a {MARK} sleep 300'], "
                 f"start_new_session=True)\nprint('started')\n"),
        ("test", "import os, sys, json\nprint(json.dumps({'uid': os.getuid(), 'env': dict(os.environ), "
                 "'stdin': sys.stdin.read(), 'proc': os.path.exists('/proc/self'), "
                 f"'home': sorted(os.listdir({str(home)!r})) if os.path.isdir({str(home)!r}) else []}}))\n"),
        ("test", "from autograd_lab.course import checks\nprint(int(checks.grading_rng('tag').integers(10**9)))\n"),
    ]
    os.environ["AUTOGRAD_LAB_GRADING_SECRET"] = "grader-side-secret-value"
    try:
        result = sandbox.run_job(job(*cells, seeds={"tag": 42}), Limits(cell_seconds=20))
    finally:
        del os.environ["AUTOGRAD_LAB_GRADING_SECRET"]
    server.close()
    return {"result": result, "v": verdicts(result), "package_init": package_init, "before": before,
            "accepted": accepted, "home": home}


def test_the_sandbox_finished_every_probe(isolation: dict) -> None:
    assert isolation["result"].finished, isolation["result"].stderr
    assert sorted(isolation["v"]) == list(range(11))


@pytest.mark.parametrize("probe, what", [(0, "the instructor's source"), (1, "another student's submission"),
                                         (2, "the gradebook (write)"), (3, "the mounted package (write)"),
                                         (4, "the package at its real path (write)"), (5, "the course folder"),
                                         (6, "a server on the grader's loopback"), (7, "the grader's pid")])
def test_the_sandbox_cannot_reach(isolation: dict, probe: int, what: str) -> None:
    out = text(isolation["v"][probe])
    assert "blocked" in out and "REACHED" not in out, f"{what}: {out!r}"


def test_nothing_was_changed_or_contacted_outside(isolation: dict) -> None:
    assert isolation["package_init"].read_bytes() == isolation["before"]
    assert isolation["accepted"] == []


def test_no_process_outlives_the_sandbox(isolation: dict) -> None:
    assert "started" in text(isolation["v"][8])
    assert leftovers() == [], "processes left behind by the submission"


def test_the_sandbox_runs_unprivileged_without_the_secret_stdin_or_proc(isolation: dict) -> None:
    facts = json.loads(text(isolation["v"][9]))
    assert facts["uid"] == sandbox.SANDBOX_UID
    assert "grader-side-secret-value" not in json.dumps(facts["env"])
    assert not any("SECRET" in k for k in facts["env"])
    assert facts["stdin"] == ""  # the job (with its hidden tests) was read and stdin closed
    assert facts["proc"] is False
    python_home = Path(os.path.realpath(sys.base_prefix))
    allowed = set()
    if python_home.is_relative_to(isolation["home"]):
        allowed.add(python_home.relative_to(isolation["home"]).parts[0])
    assert set(facts["home"]) <= allowed, f"the instructor's home shows {facts['home']}"


def test_hidden_inputs_come_from_seeds_made_outside(isolation: dict) -> None:
    assert int(text(isolation["v"][10])) == int(np.random.default_rng(42).integers(10**9))


LIMITS = Limits(cell_seconds=8, notebook_seconds=120, cpu_seconds=1, memory_mb=1000, processes=6, file_mb=1,
                scratch_mb=8, output_kb=64)


@pytest.fixture(scope="module")
def limited() -> dict:
    cells = [
        ("test", "import time\ntime.sleep(100)\n"),
        ("test", "x = bytearray(2 * 1024**3)\n"),
        ("test", "while True:\n    pass\n"),
        ("test", "import os, time\nn = 0\ntry:\n    for _ in range(50):\n        if os.fork() == 0:\n"
                 "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
                 "    print('blocked', type(e).__name__)\nprint('forked', n)\n"),
        ("test", "with open('/tmp/big', 'wb') as f:\n    f.write(b'0' * 4 * 1024**2)\n"),
        ("test", "for i in range(20):\n    with open(f'/tmp/part{i}', 'wb') as f:\n"
                 "        f.write(b'0' * 900_000)\n"),
        ("test", "print('y' * 200_000)\n"),
        ("test", "import sys\nsys.displayhook(6.0)\nraise NotImplementedError()\n"),
        ("test", "assert 1 + 1 == 2\n"),
    ]
    result = sandbox.run_job(job(*cells), LIMITS)
    return {"result": result, "v": verdicts(result)}


def test_each_limit_fails_only_its_own_test_and_the_notebook_goes_on(limited: dict) -> None:
    assert limited["result"].finished, limited["result"].stderr
    passed = {i: v["passed"] for i, v in limited["v"].items()}
    assert passed == {0: False, 1: False, 2: False, 3: True, 4: False, 5: False, 6: True, 7: False, 8: True}


def test_wall_clock_memory_and_cpu_limits_are_named(limited: dict) -> None:
    v = limited["v"]
    assert v[0]["ename"] == "CellTimeoutError"
    assert "cell_seconds = 8 s" in batch.explain(v[0]["ename"], v[0]["evalue"], LIMITS)
    assert v[1]["ename"] == "MemoryError"
    assert "memory_mb = 1000 MiB" in batch.explain(v[1]["ename"], v[1]["evalue"], LIMITS)
    assert v[2]["ename"] == "TestProcessDied" and "SIGXCPU" in v[2]["evalue"]
    assert "cpu_seconds = 1 s" in batch.explain(v[2]["ename"], v[2]["evalue"], LIMITS)


def test_processes_files_and_scratch_are_bounded(limited: dict) -> None:
    v = limited["v"]
    out = text(v[3])
    assert "blocked BlockingIOError" in out, out
    assert 0 <= int(out.split("forked")[1]) <= LIMITS.processes
    assert v[4]["ename"] == "OSError" and "File too large" in v[4]["evalue"]
    assert v[5]["ename"] == "OSError" and "No space left" in v[5]["evalue"]


def test_output_is_capped_and_reported(limited: dict) -> None:
    done = next(r for r in limited["result"].records if r["event"] == "done")
    assert done["truncated"] is True
    assert len(json.dumps(limited["result"].records)) < 3 * LIMITS.output_kb * 1024


def test_a_displayed_number_never_counts(limited: dict) -> None:
    v = limited["v"][7]
    assert v["passed"] is False and v["ename"] == "NotImplementedError"
    assert all(o["output_type"] != "execute_result" for o in v["outputs"])


def test_a_process_that_dies_keeps_the_tests_decided_before() -> None:
    result = sandbox.run_job(job(("test", "assert True\n"), ("helper", "import os\nos._exit(3)\n"),
                                 ("test", "assert True\n")), Limits())
    assert not result.finished and not result.killed_at_limit
    assert {i: v["passed"] for i, v in verdicts(result).items()} == {0: True}


def test_the_notebook_limit_kills_the_whole_sandbox() -> None:
    result = sandbox.run_job(job(("test", "assert True\n"), ("helper", "import time\ntime.sleep(60)\n"),
                                 ("test", "assert True\n")), Limits(cell_seconds=60, notebook_seconds=3))
    assert result.killed_at_limit and not result.finished
    assert result.seconds < 15
    assert {i: v["passed"] for i, v in verdicts(result).items()} == {0: True}


def test_signals_from_the_sandbox_do_not_reach_the_grader() -> None:
    # kill(-1) signals every process the caller may signal: in its own pid namespace, only the sandbox's.
    result = sandbox.run_job(job(("test", "import os, signal\nos.kill(-1, signal.SIGKILL)\n")), Limits())
    assert signal.getsignal(signal.SIGTERM) is not None  # we are still here to look
    assert not any(v["passed"] for v in verdicts(result).values())


def test_feedback_outputs_come_from_a_separate_run_and_never_decide_a_verdict() -> None:
    cells = [
        ("helper", "import matplotlib.pyplot as plt\n"),
        ("demo", "plt.plot([1, 2, 3])\nprint('demo ran')\n"),
        ("demo", "raise ValueError('a demo cell that fails')\n"),
        ("demo", "print('after the failure')\n"),
        ("test", "assert True\n"),
    ]
    result = sandbox.run_job(job(*cells), Limits())
    outputs = {r["index"]: r for r in result.records if r.get("event") == "outputs"}
    assert result.finished and verdicts(result)[4]["passed"]
    demo = outputs[1]["outputs"]
    assert any("image/png" in o.get("data", {}) for o in demo), demo
    assert any(o.get("text") == "demo ran\n" for o in demo)
    assert outputs[2]["error"]["ename"] == "ValueError"  # recorded, and the next cell still ran
    assert outputs[3]["outputs"][0]["text"] == "after the failure\n"
    assert 4 not in outputs  # a graded test's outputs come only with its verdict


def leftovers() -> list[str]:
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if MARK.encode() in (entry / "cmdline").read_bytes():
                    left.append(entry.name)
            except OSError:
                continue
    return left


def test_unsafe_mode_runs_the_same_harness_without_the_sandbox() -> None:
    escape = (f"import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'exec -a {MARK} sleep 300'], "
              f"start_new_session=True)\n")
    result = sandbox.run_job(job(("test", "import os\nprint(os.getuid())\n"), ("test", escape)), Limits(),
                             unsafe=True)
    assert result.finished and verdicts(result)[0]["passed"]
    assert text(verdicts(result)[0]).strip() == str(os.getuid())  # the grader's own rights: hence the warning
    group = sandbox._pids_cgroup(1)
    if group is not None:  # where a pids cgroup can be made, even a process in a new session is caught
        sandbox._remove_cgroup(group)
        assert leftovers() == []


def test_monkeypatches_made_by_an_answer_cell_are_undone_before_the_tests() -> None:
    # Past the static check on purpose: a definition-time patch of numpy, builtins or the checks module.
    patch = ("import numpy, builtins\nfrom autograd_lab.course import checks\n"
             "numpy.allclose = lambda *a, **k: True\nbuiltins.isinstance = lambda *a: True\n"
             "checks.grading_rng = lambda tag: numpy.random.default_rng(0)\n")
    test = ("import numpy as np\nfrom autograd_lab.course import checks\n"
            "assert not np.allclose([1.0], [2.0])\nassert not isinstance(1, str)\n"
            "assert int(checks.grading_rng('tag').integers(10**9)) == int(np.random.default_rng(7).integers(10**9))\n")
    result = sandbox.run_job(job(("answer", patch), ("test", test), ("answer", patch), ("test", test),
                                 seeds={"tag": 7}), Limits())
    assert result.finished, result.stderr  # the harness, which needs builtins and numpy, kept working
    assert verdicts(result)[1]["passed"] and verdicts(result)[3]["passed"], verdicts(result)


def test_a_module_planted_in_the_scratch_directory_is_never_imported() -> None:
    plant = "with open('/tmp/planted_module.py', 'w') as f:\n    f.write('X = 1')\n"
    probe = "try:\n    import planted_module\n    print('IMPORTED')\nexcept ImportError:\n    print('blocked')\n"
    result = sandbox.run_job(job(("test", plant), ("test", probe)), Limits())
    assert verdicts(result)[0]["passed"]
    assert text(verdicts(result)[1]).strip() == "blocked"


def test_the_sandbox_cannot_make_namespaces_of_its_own() -> None:
    # --disable-userns: no nested user namespace, so no way to rearrange mounts or regain capabilities.
    probe = ("import subprocess\nr = subprocess.run(['/usr/bin/unshare', '-U', 'true'], capture_output=True)\n"
             "print('blocked' if r.returncode else 'REACHED')\n")
    result = sandbox.run_job(job(("test", probe)), Limits())
    assert text(verdicts(result)[0]).strip() == "blocked"
