"""How a graded test cell's hidden part is shown (grading/hidden.py): split at the marker, messages masked so that
no hidden input reaches the feedback (third hostile review: an answer printed its hidden inputs, or put them into
an error message)."""

from __future__ import annotations

from autograd_lab.course.grading import hidden

CELL = '''\
def check(got, label):
    assert got > 0, f"{label}: got {got}, expected more than 0"

y = f(1.0)
assert y == 2.0, f"f(1) should be 2, got {y}"
### BEGIN HIDDEN TESTS
x = secret()
assert f(x) == 2 * x, "f is wrong on a random input"
assert f(x) == 2 * x, (
    f"f({x}) should be " + f"{2 * x}, got {f(x)}")
check(f(x), "positive")
raise AssertionError(f"the end {x}")
### END HIDDEN TESTS
'''


def test_split_keeps_line_numbers_and_both_parts_parse() -> None:
    visible, rest = hidden.split(CELL)
    assert rest is not None and visible.splitlines()[-1].startswith("assert y == 2.0")
    assert rest.splitlines()[6] == "x = secret()"  # line 7 of the cell is line 7 of the padded hidden part
    assert hidden.split("assert True\n") == ("assert True\n", None)


def test_a_marker_inside_a_block_makes_the_whole_cell_hidden() -> None:
    cell = "if True:\n    a = 1\n    ### BEGIN HIDDEN TESTS\n    b = 2\n"
    assert hidden.split(cell) == ("", cell)


def test_messages_keep_their_text_and_lose_their_values() -> None:
    assert hidden.masked_message(CELL, 8, True, "AssertionError") == "f is wrong on a random input"
    assert hidden.masked_message(CELL, 10, True, "AssertionError") == "f(…) should be …, got …"
    assert hidden.masked_message(CELL, 2, True, "AssertionError") == "…: got …, expected more than 0"
    assert hidden.masked_message(CELL, 12, True, "AssertionError") == "the end …"


def test_errors_raised_below_the_cell_show_no_message() -> None:
    for raised_in_cell, ename in ((False, "AssertionError"), (True, "ValueError"), (False, "ValueError")):
        message = hidden.masked_message(CELL, 8, raised_in_cell, ename)
        assert message.startswith("(message not shown") and "line 8" in message
