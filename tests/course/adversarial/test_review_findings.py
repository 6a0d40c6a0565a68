"""Findings of the fourth hostile-student review, against real chapters, graded through the sandboxed grader.

Each test states the behaviour the grader promises (docs/instructor.md, section 3a), so it FAILS while the hole is
open and passes once it is closed:

* ``stepper_backward`` (chapter 03): ``Engine.backward`` is stubbed, but the library's backward stepper
  (``autograd_lab.viz.stepper.backward_steps``, imported by the chapter's own setup cell through
  ``show_backward_steps``) is a complete backward pass of its own. Pointed at the learner's own ``topo_sort`` (one
  attribute, ``stepper.Engine``), it computes every gradient: full marks for ``backward`` (5 points) without
  writing the backward pass.
* ``shape_leak`` (chapter 03): the judge's form check describes the expected value with ``checks._kind``, which
  prints an array's shape (``should be an array of shape (3, 2) and dtype float64``). The expected shape is drawn
  from the hidden seed, so the feedback depends on the hidden inputs. An answer that behaves in the feedback run
  (the whole library) and returns nothing in the graded run (the library's exercise is a stub there: a one-line
  probe tells them apart) reads the hidden shapes off its feedback.
* ``threaded_zero_grad`` (chapter 03, honest code refused): the sandbox's pids cgroup (``pids.max = processes +
  4`` = 20) counts threads, not only processes, so an answer that uses a thread pool of 24 workers (or
  ``ThreadPoolExecutor()`` with its default ``min(32, cpus + 4)`` workers on a grading machine with 16 or more
  cores) cannot start its threads on the hidden inputs and loses the test, while plain Python runs it. (The visible
  test has 3 nodes, so only 3 threads start there and it passes.)
* ``taps_im2col`` (chapter 09): ``autograd_lab.ops.conv.im2col`` is stubbed, but its private helper
  ``autograd_lab.ops.conv._taps`` (the row and column slices of every kernel tap, i.e. the whole content of the
  exercise) is not: an ``im2col`` that loops over ``_taps(...)`` gets full marks.
* ``fused_lstm`` (chapter 10): ``nn.recurrent.lstm_cell`` and ``lstm_step`` are stubbed, but the library's fused
  LSTM operators (``autograd_lab.ops.gates.LSTMGatesOp``, ``LSTMCellStateOp``, ``LSTMHiddenOp``: every gate
  activation, both state equations and their backward) are not: two matmuls, two adds and those three ops give full
  marks for ``lstm_cell`` (forward and backward tests) and for ``hidden_gradient_norms``, which uses it.
  (``LSTMGatesOp`` also holds a sigmoid and a tanh with their derivatives, exercises of chapters 04 and 06.)
* the sandbox mounts the base interpreter (``sys.base_prefix``) and ``/usr`` read-only, but hides autodiff
  libraries only in the virtualenv's site-packages (``sandbox._site_dirs`` lists ``site.getsitepackages()``, which
  inside a virtualenv is the virtualenv's folder only). ``sys.path.append(<base site-packages>)`` or
  ``sys.path.append("/usr/lib/python3/dist-packages")`` then imports whatever is installed there (a Debian
  ``python3-autograd`` or ``python3-torch``, a torch in the base interpreter); on this machine it imports the base
  interpreter's scipy and sympy.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from nbformat import NotebookNode

from autograd_lab.course.grading import sandbox

from ..submissions import grade_solution_variants

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("review_findings")]

CHAPTER = "03_engine"

STEPPER_BACKWARD = '''
def backward(root):
    from types import SimpleNamespace
    from autograd_lab.viz import stepper
    order = topo_sort(root)  # the learner's own (graded separately)
    for node in order:  # the stepper's checked call refuses a None gradient: use the op's own backward
        if node.op is not None:
            node.op.run_backward = node.op.backward
    saved = stepper.Engine
    stepper.Engine = SimpleNamespace(backward_order=lambda r: list(reversed(order)))
    try:
        last = None
        for last in stepper.backward_steps(root, np.ones_like(root.data)):
            pass
    finally:
        stepper.Engine = saved
    for node, g in last.grads.items():
        if node.is_leaf:
            node.grad = np.array(g, dtype=node.dtype, copy=True) if node.grad is None else node.grad + g
    for node in order:
        if not node.is_leaf:
            node.grad = None
'''

THREADED_ZERO_GRAD = '''
from concurrent.futures import ThreadPoolExecutor


def zero_grad(root):
    """Set .grad to None on every node of root's graph (one task per node, in a pool of threads)."""
    nodes = topo_sort(root)
    with ThreadPoolExecutor(max_workers=24) as pool:
        list(pool.map(lambda node: setattr(node, "grad", None), nodes))
'''

GRADED_RUN_PROBE = '''
def _graded():
    """True in the graded sandbox, where the library's exercise is a stub; False in the feedback run."""
    try:
        autograd_lab.Engine.topo_sort(Variable.from_numpy(np.zeros(1)))
        return False
    except NotImplementedError:
        return True

'''


def _cell(nb: NotebookNode, gid: str) -> NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def _answer(gid: str, code: str) -> Callable[[NotebookNode], None]:
    def edit(nb: NotebookNode) -> None:
        _cell(nb, gid).source = code
    return edit


def _silent_when_graded(nb: NotebookNode) -> None:
    """The instructor's backward, returning at once in the graded run (visible tests pass, hidden results: None)."""
    cell = _cell(nb, "backward_code")
    marker = "    order = topo_sort(root)"
    assert marker in cell.source
    cell.source = GRADED_RUN_PROBE + cell.source.replace(marker, "    if _graded():\n        return\n" + marker, 1)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    edits = {"full": None, "stepper_backward": _answer("backward_code", STEPPER_BACKWARD),
             "shape_leak": _silent_when_graded, "threaded_zero_grad": _answer("zero_grad_code", THREADED_ZERO_GRAD)}
    return grade_solution_variants(tmp_path_factory.mktemp("review"), CHAPTER, edits)


def test_the_honest_solution_keeps_full_marks(reports: dict) -> None:
    full = reports["full"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)


def test_a_backward_built_on_the_librarys_stepper_gets_no_backward_points(reports: dict) -> None:
    """backward_test (3) and backward_accumulate_test (2) must not pass on the library's own backward pass."""
    report, full = reports["stepper_backward"], reports["full"]
    message = "; ".join(report.messages)
    assert report.score <= full.max_score - 5, f"the stepper's backward pass scored {report.score}: {message}"
    assert re.search(r"backward_test \(3 points\) failed", message), message
    assert re.search(r"backward_accumulate_test \(2 points\) failed", message), message


def test_a_wrong_form_message_never_names_a_hidden_shape(reports: dict) -> None:
    """The form message may name keys and dtypes, never a shape drawn from the hidden seed."""
    report = reports["shape_leak"]
    message = "; ".join(report.messages)
    assert "backward_test (3 points) failed" in message, message  # the hidden part did fail on its form
    assert not re.search(r"of shape \(", message), f"the feedback names a hidden shape: {message}"


def test_an_answer_that_uses_a_pool_of_threads_keeps_its_points(reports: dict) -> None:
    """Threads are not processes: a thread pool in an honest answer must not cost the test (plain Python runs it)."""
    report, full = reports["threaded_zero_grad"], reports["full"]
    assert report.score == full.max_score, f"{report.score}/{full.max_score}: {'; '.join(report.messages)}"


TAPS_IM2COL = '''
from autograd_lab.ops.conv import _taps


def im2col(xp, kh, kw, stride=1):
    n, c, hp, wp = xp.shape
    out = ((hp - kh) // stride + 1, (wp - kw) // stride + 1)
    cols = np.empty((n, c, kh, kw, *out), dtype=xp.dtype)
    for i, j, rows, columns in _taps((kh, kw), (stride, stride), out, (1, 1)):
        cols[:, :, i, j] = xp[:, :, rows, columns]
    return cols.reshape(n, c * kh * kw, out[0] * out[1])
'''


@pytest.fixture(scope="module")
def conv_reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return grade_solution_variants(tmp_path_factory.mktemp("review09"), "09_convolution",
                                   {"full": None, "taps_im2col": _answer("im2col_code", TAPS_IM2COL)})


def test_an_im2col_built_on_the_librarys_tap_slices_gets_no_im2col_points(conv_reports: dict) -> None:
    report, full = conv_reports["taps_im2col"], conv_reports["full"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)
    message = "; ".join(report.messages)
    assert report.score < full.max_score, f"an im2col on the library's _taps scored {report.score}: {message}"
    assert re.search(r"im2col_test \(\d+ points?\) failed", message), message


def test_every_package_folder_mounted_in_the_sandbox_is_searched_for_autodiff_libraries() -> None:
    """The base interpreter's site-packages and Debian's dist-packages are mounted (read-only) in the sandbox, so
    masks() must cover them as it covers the virtualenv's."""
    mounted = [Path(sysconfig.get_path("purelib", vars={"base": sys.base_prefix, "platbase": sys.base_prefix}))]
    mounted += [Path(p) for p in ("/usr/lib/python3/dist-packages", f"/usr/lib/python3.{sys.version_info[1]}/"
                                  "dist-packages", "/usr/local/lib/python3/dist-packages") if Path(p).is_dir()]
    searched = {p.resolve() for p in sandbox._site_dirs()}
    missing = [str(p) for p in mounted if p.is_dir() and p.resolve() not in searched]
    assert not missing, f"mounted in the sandbox but never searched for torch, jax, autograd, ...: {missing}"


FUSED_LSTM_CELL = '''
from autograd_lab.ops.gates import LSTMCellStateOp, LSTMGatesOp, LSTMHiddenOp


def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    pre_x = MatMulOp(transpose_b=True)(x, weight_ih)
    pre_h = MatMulOp(transpose_b=True)(h, weight_hh)
    if bias_ih is not None:
        pre_x = AddOp()(pre_x, bias_ih)
    if bias_hh is not None:
        pre_h = AddOp()(pre_h, bias_hh)
    gates = LSTMGatesOp(axis=-1)(AddOp()(pre_x, pre_h))
    c_next = LSTMCellStateOp(axis=-1)(gates, c)
    return LSTMHiddenOp(axis=-1)(gates, c_next), c_next
'''


@pytest.fixture(scope="module")
def recurrent_reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return grade_solution_variants(tmp_path_factory.mktemp("review10"), "10_recurrent",
                                   {"full": None, "fused_lstm": _answer("lstm_cell_code", FUSED_LSTM_CELL)})


def test_an_lstm_cell_built_on_the_librarys_fused_gate_ops_gets_no_lstm_points(recurrent_reports: dict) -> None:
    report, full = recurrent_reports["fused_lstm"], recurrent_reports["full"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)
    message = "; ".join(report.messages)
    assert report.score < full.max_score, f"an lstm_cell on the library's fused ops scored {report.score}: {message}"
    assert re.search(r"lstm_cell_forward_test \(\d+ points?\) failed", message), message
    assert re.search(r"lstm_cell_backward_test \(\d+ points?\) failed", message), message
