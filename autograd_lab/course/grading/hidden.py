"""What a graded test cell may show from its hidden part: nothing that carries the hidden inputs.

The hidden part of a test (between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``) draws its inputs from
the grading secret, seeded per student. Those inputs reach the answer as arguments, so an answer can print them,
put them into an exception's message (``raise ValueError(str(x.tolist()))``) or into a library error
(``np.reshape(x, (int(x[0] * 1e6),))`` names the shape), and an f-string message of an instructor's assert can show
them (``f"... has {depth + 2} nodes"``). A third hostile-student review read its own hidden inputs from its
feedback that way; with them, a second submission can hard-code the expected outputs, computed at home with the
library, and score full marks. So the harness runs a test cell in two parts (:func:`split`) and, for the hidden part:

- drops its printed and displayed output (a note says how much was dropped);
- keeps the message of a failed ``assert`` (or ``raise AssertionError(...)``) written in the test cell only as far
  as it is text: the constant parts of an f-string stay, every ``{...}`` becomes ``…`` (:func:`masked_message`);
- shows the message of an own-code refusal (``NotOwnCodeError`` raised by ``checks.assert_own_code`` called from
  the test cell, as the runner establishes from the traceback): it is the grader's text about the student's own
  code and the reference's public name, made before any hidden input reaches it, and says why no points were given;
- shows no message for any other error (its type and the test's line stay).
"""

from __future__ import annotations

import ast

BEGIN = "### BEGIN HIDDEN TESTS"
ELLIPSIS = "…"


def split(source: str) -> tuple[str, str | None]:
    """(visible part, hidden part or None) of a test cell's source, split at the first :data:`BEGIN` line.

    The hidden part is padded with blank lines so its line numbers are those of the whole cell. Both parts must
    parse on their own (the marker at the top level, as in every course notebook); otherwise the whole cell counts
    as hidden: ``("", source)``.
    """
    lines = source.splitlines(True)
    at = next((i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)), None)
    if at is None:
        return source, None
    visible, hidden = "".join(lines[:at]), "\n" * at + "".join(lines[at:])
    try:
        ast.parse(visible)
        ast.parse(hidden)
    except SyntaxError:
        return "", source
    return visible, hidden


def _text_of(node: ast.expr | None) -> str | None:
    """The text a message expression shows when its formatted values are masked; None if it is not text."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else ELLIPSIS for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "..." + f"..." across lines
        left, right = _text_of(node.left), _text_of(node.right)
        return None if left is None or right is None else left + right
    return None


def masked_message(source: str, line: int, raised_in_cell: bool, ename: str,
                   own_code_refusal: str | None = None) -> str:
    """The message to show for an error raised at ``line`` (1-based) of a test cell's hidden part.

    Args:
        source: the whole test cell.
        line: the line of the test cell where the error surfaced (the innermost frame in the cell).
        raised_in_cell: whether the error was raised by the cell's own code at ``line`` (not in a call below it).
        ename: the exception's class name.
        own_code_refusal: the message of an own-code refusal, when the runner found the error to be one (the real
            ``NotOwnCodeError`` raised inside ``checks.assert_own_code`` called from the cell); shown as it is.
    """
    if own_code_refusal is not None and ename == "NotOwnCodeError":
        return own_code_refusal
    hidden = f"(message not shown: it was raised while the hidden tests ran, on inputs that stay hidden; line {line})"
    if not raised_in_cell or ename != "AssertionError":
        return hidden
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return hidden
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        message: ast.expr | None
        if isinstance(node, ast.Assert):
            message = node.msg
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and len(node.exc.args) <= 1:
            message = node.exc.args[0] if node.exc.args else None
        else:
            continue
        text = _text_of(message)
        return text if text is not None else hidden
    return hidden


def dropped_note(count: int) -> dict:
    """The stream output that stands for ``count`` characters of hidden-part output."""
    return {"output_type": "stream", "name": "stdout",
            "text": f"({count} characters of output printed while the hidden tests ran are not shown)\n"}
