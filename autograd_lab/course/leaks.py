"""The check that feedback HTML shows no hidden test, without blaming a student for their own code.

A hidden-test line is one that appears only between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` in the
source notebooks. Feedback HTML also shows the student's own cells, and a student may well write a line that a hidden
test also holds (``while stack:``). So each feedback file is checked against the hidden lines *minus* the lines
found in that student's own cells (answer cells and cells they added, source and output): what remains can only
have come from the grader. A real leak shows a whole hidden test, so it is still caught by its other lines.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import nbformat

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"


def hidden_test_lines(source_dir: Path, min_length: int = 12) -> list[str]:
    """Lines found only inside hidden-test regions of the notebooks in ``source_dir`` (stripped, at least
    ``min_length`` characters so that they are distinctive): the text that must never reach a student."""
    hidden: set[str] = set()
    visible: set[str] = set()
    for path in source_dir.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                text = line.strip()
                if BEGIN_HIDDEN in text:
                    inside = True
                elif END_HIDDEN in text:
                    inside = False
                elif text:
                    (hidden if inside else visible).add(text)
    return sorted(line for line in hidden - visible if len(line) >= min_length)


def student_lines(notebook: Path) -> set[str]:
    """Stripped lines the student wrote or produced in ``notebook`` (an autograded or submitted notebook): the
    source and outputs of answer cells and of cells without nbgrader metadata. Empty if the file is unreadable."""
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # an unreadable notebook has nothing to exclude; every hidden line is checked
        return set()
    lines: set[str] = set()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grader_owned = meta.get("locked") or (meta.get("grade") and not meta.get("solution"))
        if grader_owned:
            continue
        texts = [cell.get("source", "")]
        for out in cell.get("outputs", []):
            texts.append(out.get("text", ""))
            texts += [str(v) for v in out.get("data", {}).values()]
            texts += [out.get("evalue", ""), *out.get("traceback", [])]
        lines.update(line.strip() for text in texts for line in str(text).splitlines() if line.strip())
    return lines


def leaked_lines(html_text: str, hidden: Sequence[str], own: Iterable[str] = ()) -> list[str]:
    """The ``hidden`` lines that appear in ``html_text`` (tags removed, entities decoded), except those in
    ``own`` (the student's own lines, see :func:`student_lines`), which the student may have written."""
    text = html.unescape(re.sub(r"<[^>]+>", "", html_text))
    mine = set(own)
    return [line for line in hidden if line not in mine and line in text]


def find_leaks(course_dir: Path, assignment: str, files: Sequence[Path]) -> dict[Path, list[str]]:
    """{feedback file: leaked hidden lines} for every file in ``files`` that leaks (all are checked).

    ``files`` are ``feedback/<student>/<assignment>/<notebook>.html``; the student's own lines are read from
    ``autograded/<student>/<assignment>/<notebook>.ipynb`` and ``submitted/...`` when present.
    """
    hidden = hidden_test_lines(course_dir / "source" / assignment)
    leaks = {}
    for path in files:
        student, notebook = path.parent.parent.name, path.with_suffix(".ipynb").name
        own: set[str] = set()
        for stage in ("autograded", "submitted"):
            candidate = course_dir / stage / student / assignment / notebook
            if candidate.is_file():
                own |= student_lines(candidate)
        leaked = leaked_lines(path.read_text(encoding="utf-8"), hidden, own)
        if leaked:
            leaks[path] = leaked
    return leaks
