"""Feedback HTML runs nothing a submission produced: NeutraliseOutputs on hostile outputs, rendered by nbconvert."""

from __future__ import annotations

import base64
import functools
import re

import nbformat
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.course.instructor.preprocessors import NeutraliseOutputs

SCRIPT = "<script>alert('owned')</script>"
# A real 1x1 PNG.
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()


@functools.cache
def _exporter() -> HTMLExporter:
    return HTMLExporter(template_name="classic")


def hostile_notebook() -> nbformat.NotebookNode:
    code = new_code_cell("x = 1", metadata={"nbgrader": {"solution": True, "grade": False, "locked": False,
                                                         "grade_id": "x_code", "schema_version": 3}})
    code.outputs = [
        new_output("display_data", data={"text/html": SCRIPT, "text/plain": "<Thing>"}),
        new_output("display_data", data={"image/svg+xml": f"<svg onload=\"alert(1)\">{SCRIPT}</svg>"}),
        new_output("display_data", data={"application/javascript": "alert('js')"}),
        new_output("display_data", data={"text/markdown": f"**hi** {SCRIPT}"}),
        new_output("execute_result", data={"image/png": 'AAAA" onerror="alert(1)'}, execution_count=1),
        new_output("display_data", data={"image/png": PNG}, metadata={"image/png": {"width": '1" onload="x'}}),
        new_output("stream", name='stdout"><script>alert(2)</script>', text="printed <b>bold</b>"),
    ]
    code.metadata["tags"] = ['ok-tag', '"><script>alert(4)</script>']
    answer_md = new_markdown_cell(f"my answer {SCRIPT} [link](javascript:alert(5))",
                                  metadata={"nbgrader": {"solution": True, "grade": False, "locked": False,
                                                         "grade_id": "md_answer", "schema_version": 3}})
    return new_notebook(cells=[new_markdown_cell("# Chapter\nThe instructor's *text*."), code, answer_md])


def neutralised() -> nbformat.NotebookNode:
    nb, _ = NeutraliseOutputs().preprocess(hostile_notebook(), {})
    return nb


def test_only_plain_text_and_real_png_survive_with_a_notice() -> None:
    outputs = neutralised().cells[1].outputs
    mimes = [sorted(o.get("data", {})) for o in outputs if o.output_type != "stream"]
    assert mimes == [["text/plain"], ["text/plain"], ["text/plain"], ["text/plain"], ["text/plain"],
                     ["image/png"]]
    assert "text/html output removed from the feedback" in outputs[0].data["text/plain"]
    assert outputs[0].data["text/plain"].startswith("<Thing>")
    assert "image/png output removed" in outputs[4].data["text/plain"]  # not base64 of a PNG
    assert outputs[5].metadata == {}
    assert outputs[6].name == "stdout"


def test_rendered_feedback_holds_no_script_or_active_markup() -> None:
    html_text, _ = _exporter().from_notebook_node(neutralised())
    body = html_text[html_text.index("<body"):]
    # The page template's own scripts (MathJax, require.js) sit in <head>; the cells must add none.
    assert not re.search(r"<script>alert", body)
    assert "<svg onload" not in body and "onerror=" not in body and 'onload="x' not in body
    assert "href=\"javascript:" not in body
    assert "<pre><code>my answer &lt;script&gt;" in body  # the markdown answer is shown as literal text
    assert "The instructor" in body and "<em>text</em>" in body  # the instructor's markdown still renders
    assert f"data:image/png;base64,{PNG}" in body


def test_the_hostile_page_without_the_preprocessor_would_run_scripts() -> None:
    # The control: the same notebook rendered as is does carry the student's script (so the test above means it).
    html_text, _ = _exporter().from_notebook_node(hostile_notebook())
    assert "<script>alert('owned')</script>" in html_text[html_text.index("<body"):]


def test_graded_test_cells_keep_only_their_verdict() -> None:
    # A student's function printing its (secret) inputs while the hidden test runs must not reach feedback.
    test = new_code_cell("assert f(secret_x) == 1", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "f_test", "points": 1, "schema_version": 3}})
    test.outputs = [new_output("stream", name="stdout", text="inputs: [0.1234, -1.5]"),
                    new_output("error", ename="AssertionError", evalue="wrong", traceback=["AssertionError: wrong"])]
    nb, _ = NeutraliseOutputs().preprocess(new_notebook(cells=[test]), {})
    assert [o.output_type for o in nb.cells[0].outputs] == ["error"]
