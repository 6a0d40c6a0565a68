"""The sandbox and the exercise process on their own: isolation, masks, limits, and the two-phase job.

Jobs are written by hand and given to :func:`sandbox.run_job` directly. Probes run as demo cells of the public part
(their printed output is the feedback the grader receives); hidden parts run as the secret part's tests (their
bytes are the data the judge would parse). One sandbox run serves many assertions (module fixtures).
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

from autograd_lab.course.grading import exchange, sandbox, stubs
from autograd_lab.course.grading.limits import Limits

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox.sandbox_problem() is not None, reason=f"no sandbox: {sandbox.sandbox_problem()}"),
]

MARK = "sleep-left-behind-by-a-submission"
SETUP = "import numpy as np\nfrom autograd_lab.course import checks\n"
INPUTS = "def inputs(rng):\n    return {'v': rng.normal(size=3)}\n"


def hidden(tag: str, exercise_body: str) -> str:
    """A hidden part whose exercise runs ``exercise_body`` (indented; ``x`` is the inputs) and returns it."""
    body = "".join(f"    {line}\n" for line in exercise_body.splitlines())
    return (f"{INPUTS}\ndef exercise(x):\n{body}\n"
            f"checks.hidden_test({tag!r}, inputs=inputs, exercise=exercise)\n")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library copy the sandbox mounts, with AddOp stubbed."""
    return stubs.stubbed_package(["autograd_lab.ops.AddOp"], tmp_path_factory.mktemp("cache"))


def run(package: Path, cells: list[tuple[str, str]], tests: dict[int, str] | None = None,
        seeds: dict[str, int] | None = None, limits: Limits | None = None, unsafe: bool = False) -> sandbox.RunResult:
    """cells: (kind, source), kind helper/answer/demo/test (a test's visible part); tests: index -> hidden part,
    whose grade_id is ``t<index>``."""
    public = [{"index": i, "kind": kind, "grade_id": f"t{i}" if kind == "test" else f"c{i}", "source": src}
              for i, (kind, src) in enumerate(cells)]
    secret = {"seeds": seeds if seeds is not None else {f"t{i}": 1234 for i in (tests or {})},
              "tests": [{"index": i, "grade_id": f"t{i}", "source": src} for i, src in (tests or {}).items()]}
    return sandbox.run_job(public, secret, package, limits or Limits(cell_seconds=20), unsafe=unsafe)


def text(result: sandbox.RunResult, index: int) -> str:
    return "".join(o.get("text", "") for o in result.outputs[index]["outputs"] if o["output_type"] == "stream")


def probe_open(path: str, mode: str = "r") -> str:
    return (f"try:\n    with open({path!r}, {mode!r}) as f:\n        f.{'read' if mode == 'r' else 'write'}"
            f"({'' if mode == 'r' else repr('tampered')})\n    print('REACHED')\n"
            f"except OSError as e:\n    print('blocked', type(e).__name__)\n")


def probe_import(module: str) -> str:
    return f"try:\n    import {module}\n    print('REACHED')\nexcept ImportError:\n    print('blocked')\n"


REAL_PACKAGE = Path(stubs.PACKAGE)


@pytest.fixture(scope="module")
def isolation(package: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("isolation")
    course = tmp / "course"
    secret_source = course / "source" / "a" / "a.ipynb"
    other = course / "submitted" / "other_student" / "a" / "a.ipynb"
    gradebook = course / "gradebook.db"
    for path in (secret_source, other, gradebook):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("INSTRUCTOR ONLY", encoding="utf-8")
    package_init = REAL_PACKAGE / "__init__.py"
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
    probes = [
        probe_open(str(secret_source)),
        probe_open(str(other)),
        probe_open(str(gradebook), "a"),
        probe_open(f"{sandbox.PACKAGE_MOUNT}/autograd_lab/__init__.py", "a"),
        probe_open(str(package_init)),
        probe_open(str(REAL_PACKAGE / "ops" / "arithmetic.py")),
        f"import os\ntry:\n    print(os.listdir({str(course)!r}))\nexcept OSError as e:\n"
        f"    print('blocked', type(e).__name__)\n",
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        f"    print('REACHED')\nexcept OSError as e:\n    print('blocked', type(e).__name__)\n",
        f"import os, signal\ntry:\n    os.kill({os.getpid()}, signal.SIGTERM)\n    print('REACHED')\n"
        f"except OSError as e:\n    print('blocked', type(e).__name__)\n",
        probe_import("torch"),
        probe_import("functorch"),
        probe_import("torch.nn"),
        f"import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'exec -a {MARK} sleep 300'], "
        f"start_new_session=True)\nprint('started')\n",
        "import os, sys, json\nprint(json.dumps({'uid': os.getuid(), 'env': dict(os.environ), "
        "'stdin': sys.stdin.read(), 'proc': os.path.exists('/proc/self'), "
        f"'home': sorted(os.listdir({str(home)!r})) if os.path.isdir({str(home)!r}) else []}}))\n",
        "import autograd_lab, autograd_lab.ops, inspect\nprint(autograd_lab.__file__)\n"
        "print(inspect.getsource(autograd_lab.ops.AddOp))\n",
        "import autograd_lab.ops\nfrom autograd_lab import Variable\n"
        "try:\n    autograd_lab.ops.AddOp()(Variable.from_numpy(np.ones(2)), Variable.from_numpy(np.ones(2)))\n"
        "except NotImplementedError as e:\n    print(e)\n"
        "print((autograd_lab.ops.MulOp()(Variable.from_numpy(np.ones(2)), Variable.from_numpy(np.ones(2)))).data)\n",
    ]
    os.environ["AUTOGRAD_LAB_GRADING_SECRET"] = "grader-side-secret-value"
    try:
        result = run(package, [("helper", SETUP), *[("demo", p) for p in probes]])
    finally:
        del os.environ["AUTOGRAD_LAB_GRADING_SECRET"]
    server.close()
    return {"result": result, "package_init": package_init, "before": before, "accepted": accepted, "home": home,
            "n": len(probes)}


def test_the_sandbox_ran_every_probe(isolation: dict) -> None:
    result = isolation["result"]
    assert result.public_done and result.finished, result.stderr
    assert sorted(result.outputs) == list(range(isolation["n"] + 1))


@pytest.mark.parametrize("probe, what", [
    (1, "the instructor's source"), (2, "another student's submission"), (3, "the gradebook (write)"),
    (4, "the mounted package (write)"), (5, "the real package's __init__ (read)"),
    (6, "the real package's reference ops (read)"), (7, "the course folder"), (8, "a server on the grader's loopback"),
    (9, "the grader's pid"), (10, "torch"), (11, "functorch"), (12, "torch.nn")])
def test_the_sandbox_cannot_reach(isolation: dict, probe: int, what: str) -> None:
    out = text(isolation["result"], probe)
    assert "blocked" in out and "REACHED" not in out, f"{what}: {out!r}"


def test_nothing_was_changed_or_contacted_outside(isolation: dict) -> None:
    assert isolation["package_init"].read_bytes() == isolation["before"]
    assert isolation["accepted"] == []


def test_no_process_outlives_the_sandbox(isolation: dict) -> None:
    assert "started" in text(isolation["result"], 13)
    assert leftovers() == [], "processes left behind by the submission"


def test_the_sandbox_runs_unprivileged_without_the_secret_stdin_or_proc(isolation: dict) -> None:
    facts = json.loads(text(isolation["result"], 14))
    assert facts["uid"] == sandbox.SANDBOX_UID
    assert "grader-side-secret-value" not in json.dumps(facts["env"])
    assert not any("SECRET" in k for k in facts["env"])
    assert facts["stdin"] == ""
    assert facts["proc"] is False
    python_home = Path(os.path.realpath(sys.base_prefix))
    allowed = set()
    if python_home.is_relative_to(isolation["home"]):
        allowed.add(python_home.relative_to(isolation["home"]).parts[0])
    assert set(facts["home"]) <= allowed, f"the instructor's home shows {facts['home']}"


def test_the_library_in_the_sandbox_is_the_stubbed_copy(isolation: dict) -> None:
    out = text(isolation["result"], 15)
    assert out.startswith(f"{sandbox.PACKAGE_MOUNT}/autograd_lab/__init__.py")
    assert f"raise NotImplementedError({stubs.message('autograd_lab.ops.AddOp')!r})" in out
    assert "return a + b" not in out and "sum_to_shape(gy, a.shape)" not in out


def test_the_stub_raises_the_clear_message_and_the_rest_of_the_library_works(isolation: dict) -> None:
    lines = text(isolation["result"], 16).splitlines()
    assert lines == ["autograd_lab.ops.AddOp is one of this chapter's exercises: write it yourself", "[1. 1.]"]


def test_hidden_results_are_bytes_of_plain_data_drawn_from_the_seed(package: Path) -> None:
    result = run(package, [("helper", SETUP), ("test", "print('visible')\n")],
                 {1: hidden("t1", "return {'v': x['v'] * 2}")}, seeds={"t1": 42})
    got = exchange.decode(result.results["t1"])
    assert np.array_equal(got["v"], np.random.default_rng(42).normal(size=3) * 2)
    assert text(result, 1) == "visible\n"


def test_feedback_is_byte_identical_whatever_the_hidden_values(package: Path) -> None:
    """An answer that prints and raises its hidden inputs, and that looks for the secret part in its own process
    and writes it to every descriptor as a forged feedback record: the feedback is frozen before the secret part
    exists in the sandbox, so it is the same for any hidden values."""
    answer = ("import gc, json, os\n"
              "found = [o for o in gc.get_objects() if isinstance(o, dict) and 'seeds' in o]\n"
              "record = {'event': 'outputs', 'index': 3, 'outputs': [{'output_type': 'stream', 'name': 'stdout', "
              "'text': 'LEAK ' + str(found)}], 'error': None}\n"
              "for fd in range(3, 51):\n    try:\n        os.write(fd, (json.dumps(record) + '\\n').encode())\n"
              "    except OSError:\n        pass\n"
              "def f(v):\n    print('INPUT', v.tolist())\n    raise ValueError(str(v.tolist()))\n")
    cells = [("helper", SETUP), ("answer", answer), ("test", "print('visible part')\n"), ("demo", "print('demo')\n"),
             ("test", "")]
    tests = {2: hidden("t2", "try:\n    f(x['v'])\nexcept ValueError as e:\n    print(e)\nreturn {'v': x['v']}"),
             4: hidden("t4", "return {'v': x['v']}")}
    one = run(package, cells, tests, seeds={"t2": 1, "t4": 1})
    two = run(package, cells, tests, seeds={"t2": 2, "t4": 2})
    assert one.results["t4"] != two.results["t4"]  # the hidden inputs differ ...
    assert json.dumps(one.outputs, sort_keys=True) == json.dumps(two.outputs, sort_keys=True)  # ... the feedback not
    assert "LEAK []" in text(one, 3)  # the forged record of the public run is the student's own (empty) output
    assert "INPUT" not in json.dumps(one.outputs) and "seeds" not in json.dumps(one.outputs)


LIMITS = Limits(cell_seconds=6, notebook_seconds=120, cpu_seconds=2, memory_mb=1000, processes=6, file_mb=1,
                scratch_mb=8, output_kb=64)


@pytest.fixture(scope="module")
def limited(package: Path) -> sandbox.RunResult:
    tests = {
        1: hidden("t1", "import time\ntime.sleep(100)"),
        2: hidden("t2", "b = bytearray(2 * 1024**3)"),
        3: hidden("t3", "while True:\n    pass"),
        4: hidden("t4", "import os\nos._exit(0)"),
        5: hidden("t5", "return {'v': x['v'], 'o': object()}"),
        6: hidden("t6", "import numpy as np\nreturn {'v': np.zeros(5_000_000)}"),
        7: hidden("t7", "return {'v': x['v']}"),
    }
    cells = [("helper", SETUP), *[("test", "") for _ in tests],
             ("demo", "import os, time\nn = 0\ntry:\n    for _ in range(50):\n        if os.fork() == 0:\n"
                      "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
                      "    print('blocked', type(e).__name__)\nprint('forked', n)\n"),
             ("demo", "with open('/tmp/big', 'wb') as f:\n    f.write(b'0' * 4 * 1024**2)\n"),
             ("demo", "for i in range(20):\n    with open(f'/tmp/part{i}', 'wb') as f:\n"
                      "        f.write(b'0' * 900_000)\n"),
             ("demo", "print('y' * 200_000)\n")]
    return run(package, cells, tests, limits=LIMITS)


def test_each_limit_costs_only_its_own_test(limited: sandbox.RunResult) -> None:
    assert limited.finished, limited.stderr
    got = limited.results
    # the wall clock, memory and CPU limits, and an early exit: no data, for that test only
    assert got["t1"] is None and got["t2"] is None and got["t3"] is None and got["t4"] is None
    # not plain data, and 40 MB of it: an empty message, which the judge reads as NOT_PLAIN
    assert got["t5"] == b"" and got["t6"] == b""
    assert exchange.decode(got["t7"])["v"].shape == (3,)


def test_output_files_scratch_and_processes_are_bounded(limited: sandbox.RunResult) -> None:
    assert limited.truncated
    assert limited.outputs[9]["error"]["ename"] == "OSError" and "File too large" in limited.outputs[9]["error"][
        "evalue"]
    assert limited.outputs[10]["error"]["ename"] == "OSError" and "No space left" in limited.outputs[10]["error"][
        "evalue"]
    out = text(limited, 8)
    assert "blocked BlockingIOError" in out, out
    assert 0 <= int(out.split("forked")[1]) <= LIMITS.processes


def test_the_notebook_limit_kills_the_whole_sandbox(package: Path) -> None:
    result = run(package, [("helper", SETUP), ("answer", "import time\ntime.sleep(60)\n"), ("test", "")],
                 {2: hidden("t2", "return {}")}, limits=Limits(cell_seconds=60, notebook_seconds=3))
    assert result.killed_at_limit and not result.finished
    assert result.seconds < 15
    assert result.results.get("t2") is None


def test_signals_from_the_sandbox_do_not_reach_the_grader(package: Path) -> None:
    # kill(-1) signals every process the caller may signal: in its own pid namespace, only the sandbox's.
    result = run(package, [("helper", SETUP), ("test", "")], {1: hidden("t1", "import os, signal\n"
                                                                             "os.kill(-1, signal.SIGKILL)")})
    assert signal.getsignal(signal.SIGTERM) is not None  # we are still here to look
    assert result.results.get("t1") is None


def test_feedback_outputs_follow_run_all(package: Path) -> None:
    cells = [
        ("helper", "import matplotlib.pyplot as plt\n"),
        ("demo", "plt.plot([1, 2, 3])\nprint('demo ran')\n"),
        ("demo", "raise ValueError('a demo cell that fails')\n"),
        ("demo", "print('after the failure')\n"),
        ("demo", "6 * 7"),
    ]
    result = run(package, cells)
    demo = result.outputs[1]["outputs"]
    assert any("image/png" in o.get("data", {}) for o in demo), demo
    assert any(o.get("text") == "demo ran\n" for o in demo)
    assert result.outputs[2]["error"]["ename"] == "ValueError"  # recorded, and the next cell still ran
    assert result.outputs[3]["outputs"][0]["text"] == "after the failure\n"
    assert result.outputs[4]["outputs"][0]["data"]["text/plain"] == "42"


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


def test_unsafe_mode_runs_the_same_harness_without_the_sandbox(package: Path) -> None:
    result = run(package, [("demo", "import os\nprint(os.getuid())\n")], unsafe=True)
    assert result.finished
    assert text(result, 0).strip() == str(os.getuid())  # the grader's own rights: hence the warning


def test_a_module_planted_in_the_scratch_directory_is_never_imported(package: Path) -> None:
    plant = "with open('/tmp/planted_module.py', 'w') as f:\n    f.write('X = 1')\n"
    result = run(package, [("demo", plant), ("demo", probe_import("planted_module"))])
    assert text(result, 1).strip() == "blocked"


def test_the_sandbox_cannot_make_namespaces_of_its_own(package: Path) -> None:
    # --disable-userns: no nested user namespace, so no way to rearrange mounts or regain capabilities.
    probe = ("import subprocess\nr = subprocess.run(['/usr/bin/unshare', '-U', 'true'], capture_output=True)\n"
             "print('blocked' if r.returncode else 'REACHED')\n")
    assert text(run(package, [("demo", probe)]), 0).strip() == "blocked"


HONEST_STYLES = '''\
import functools, itertools, operator, copy
from dataclasses import dataclass, field
from typing import NamedTuple
from autograd_lab import Variable as V  # a re-import of a setup name


class Pair(NamedTuple):
    a: float
    b: float


@dataclass(slots=True)
class Acc:
    items: list = field(default_factory=list)

    def __call__(self, v):
        self.items.append(v)
        return self

    def __add__(self, other):
        return Acc(self.items + other.items)


def depth(n):  # plain recursion: 900 deep, as in plain Python (an lru_cache'd one costs two frames a level there too)
    return 0 if n == 0 else 1 + depth(n - 1)


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def styles(v):
    import math  # an import inside a function
    total = 0.0

    def bump(x):
        nonlocal total
        total += x

    for x in (y for y in v.tolist()):
        bump(x)
    exec("z = 2", scope := {})
    match len(v):
        case 0:
            kind = "empty"
        case _:
            kind = "some"
    squares = [s for x in v.tolist() if (s := x * x) >= 0]
    acc = (Acc()(1) + Acc()(2))
    print("debug:", kind)  # a debug print left in
    return {"total": getattr(operator, "add")(total, 0.0), "z": scope["z"], "depth": depth(900),
            "prod": functools.reduce(operator.mul, [1, 2, 3]) + fib(30) - 832040,
            "pairs": len(list(itertools.pairwise(range(4)))),
            "sq": math.fsum(squares), "acc": len(copy.deepcopy(acc.items)), "pair": Pair(1.0, 2.0).b,
            "cls": type(V.from_numpy(v)).__name__, "kind": kind}
'''


def test_honest_answers_in_any_style_run_as_written_and_recursion_reaches_900(package: Path) -> None:
    result = run(package, [("helper", SETUP), ("answer", HONEST_STYLES),
                           ("test", "assert styles(np.ones(2))['depth'] == 900\n")],
                 {2: hidden("t2", "return styles(x['v'])")}, seeds={"t2": 3})
    assert result.outputs[1]["error"] is None and result.outputs[2]["error"] is None, result.outputs
    got = exchange.decode(result.results["t2"])
    v = np.random.default_rng(3).normal(size=3)
    assert got == {"total": float(sum(v.tolist())), "z": 2, "depth": 900, "prod": 6, "pairs": 3,
                   "sq": pytest.approx(float(np.sum(v * v))), "acc": 2, "pair": 2.0, "cls": "Variable", "kind": "some"}
