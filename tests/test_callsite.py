"""Error messages name the user's line: a file by path and line, a Jupyter cell by its line and source."""

import linecache

import numpy as np
import pytest

from autograd_lab import Variable
from autograd_lab._callsite import describe_line, is_notebook_cell
from autograd_lab.capture import CaptureError, capture
from autograd_lab.ops import SumOp

CELL = "/tmp/ipykernel_4242/2781526443.py"  # the name ipykernel 6+ gives a cell's code
CELL_SOURCE = "def clipped(x):\n    s = SumOp()(x)\n    if s.data > 0:\n        return s\n    return s\n"


def run_as_cell(source: str) -> dict:
    """Compile ``source`` under a cell's file name and register its lines, as IPython does."""
    linecache.cache[CELL] = (len(source), None, source.splitlines(True), CELL)
    namespace = {"SumOp": SumOp}
    exec(compile(source, CELL, "exec"), namespace)
    return namespace


def test_a_cells_temp_file_is_recognised():
    assert is_notebook_cell(CELL)
    assert is_notebook_cell("<ipython-input-3-0123abcd>")
    assert not is_notebook_cell(__file__)


def test_capture_error_in_a_cell_names_the_cell_line_and_source_not_the_temp_file():
    clipped = run_as_cell(CELL_SOURCE)["clipped"]
    with pytest.raises(CaptureError) as info:
        capture(clipped, np.ones(3), backward=False)
    message = str(info.value)
    assert "line 3 of a notebook cell (`if s.data > 0:`)" in message
    assert CELL not in message and "ipykernel" not in message
    assert "call it directly, without Plan or capture" in message  # a fix that works inside a notebook


def test_a_file_keeps_its_path_and_line_and_gains_the_source():
    with open(__file__, encoding="utf-8") as f:
        first_line = f.readline().strip()
    assert describe_line(__file__, 1) == f"{__file__}:1 (`{first_line}`)"
    assert describe_line("/no/such/file.py", 7) == "/no/such/file.py:7"


def test_eager_call_of_the_same_cell_function_is_fine():
    clipped = run_as_cell(CELL_SOURCE)["clipped"]
    assert float(clipped(Variable.from_numpy(np.ones(3))).data) == 3.0
