"""An own-code refusal in a hidden test reaches the feedback; other hidden-part messages stay masked.

The runner shows the message of a ``NotOwnCodeError`` only when ``checks.assert_own_code``, called from the test
cell, raised it (the traceback below the cell's line is that function's own): its text names the student's code and
the reference's public name, never a hidden input. The same exception class raised anywhere else, or another error
carrying a hidden value, is still masked (grading/hidden.py).
"""

from __future__ import annotations

from autograd_lab.course.grading import runner

ANSWER = '''\
import numpy as np
from autograd_lab import Engine


def backward(root):
    Engine.backward(root, grad=np.ones_like(root.data))


def leaky(x):
    from autograd_lab.course import checks
    raise checks.NotOwnCodeError(f"SECRET {x}")


class NotOwnCodeError(AssertionError):
    pass


def forged(x):
    raise NotOwnCodeError(f"SECRET {x}")
'''

TEST = '''\
import autograd_lab
from autograd_lab.course import checks
### BEGIN HIDDEN TESTS
secret = 12345.678
{line}
### END HIDDEN TESTS
'''


def run_test(line: str) -> dict | None:
    cell = runner._Cell({"__name__": "__main__"}, runner._Budget(1 << 20), figures=False)
    assert cell.run(ANSWER, "<cell 0: answer>", None) is None
    error, _ = runner._run_in_parts(TEST.format(line=line), cell, "<cell 1: test>")
    return error


def test_an_own_code_refusal_in_the_hidden_part_shows_its_message() -> None:
    error = run_test("checks.assert_own_code(backward, reference=autograd_lab.Engine.backward)")
    assert error is not None and error["ename"] == "NotOwnCodeError"
    assert error["evalue"].startswith("No points for backward: its body calls autograd_lab.engine.Engine.backward")


def test_the_same_error_raised_elsewhere_with_a_hidden_value_stays_masked() -> None:
    for line in ("leaky(secret)", "forged(secret)", "raise checks.NotOwnCodeError(f'SECRET {secret}')"):
        error = run_test(line)
        assert error is not None and error["ename"] == "NotOwnCodeError", line
        assert "SECRET" not in error["evalue"] and "12345" not in error["evalue"], (line, error["evalue"])
        assert error["evalue"].startswith("(message not shown"), (line, error["evalue"])
