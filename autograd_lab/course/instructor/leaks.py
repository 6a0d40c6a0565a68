"""The feedback leak check: which lines of the hidden tests a feedback file shows that its student never saw.

A line is **hidden material** when it is a line of a hidden part of the source notebook (between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``), stripped of surrounding blanks, that

- appears as a whole line in no cell of the release the student got (so a visible test, a helper or a hint that
  the hidden part repeats is not hidden), and
- holds at least :data:`MIN_LENGTH` characters (``else:`` or ``cases = []`` say nothing about a test).

A feedback file shows such a line when one of its lines, stripped, *is* that line: lines are compared whole, never
as substrings, so text the student was given cannot match by accident. A line typed in the student's own answer
cells (their submitted notebook) is not counted: they saw it, since they wrote it.

Feedback files are HTML (what nbgrader's ``generate_feedback`` writes; each line is placed in its notebook cell) or
notebooks (every cell's source and text outputs).
"""

from __future__ import annotations

import html.parser
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
#: The shortest hidden line that counts. Over the 13 chapters, 974 of 1,009 hidden lines are not in the release; the
#: 72 shorter than this are idioms a student may print or type (``else:``, ``while stack:``, ``backward(g)``).
MIN_LENGTH = 20


@dataclass(frozen=True)
class Leak:
    """One hidden line shown by a feedback file: the file, where in it (``cell 12 (add_op_test)``, or ``page``
    for text outside any cell) and the line."""

    path: Path
    where: str
    line: str

    def __str__(self) -> str:
        return f"{self.path}: {self.where}: {self.line}"


def hidden_lines(source: nbformat.NotebookNode) -> set[str]:
    """Stripped lines inside the hidden regions of ``source`` (the markers themselves excluded)."""
    found: set[str] = set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            text = line.strip()
            if text.startswith(BEGIN_HIDDEN):
                inside = True
            elif text.startswith(END_HIDDEN):
                inside = False
            elif inside and text:
                found.add(text)
    return found


def notebook_lines(nb: nbformat.NotebookNode, *, outputs: bool = False) -> set[str]:
    """Stripped, non-empty lines of every cell's source of ``nb`` (and of its text outputs if ``outputs``)."""
    return {line for _, text in _notebook_cells(nb, outputs) for line in _lines(text)}


def hidden_material(source: nbformat.NotebookNode, release: nbformat.NotebookNode,
                    min_length: int = MIN_LENGTH) -> set[str]:
    """The hidden lines of ``source`` that ``release`` does not show and that are at least ``min_length`` long."""
    return {line for line in hidden_lines(source) - notebook_lines(release) if len(line) >= min_length}


def own_lines(submitted: nbformat.NotebookNode, answer_ids: set[str]) -> set[str]:
    """Stripped lines of the sources of ``submitted``'s cells whose ``grade_id`` is in ``answer_ids`` (the source
    notebook's answer cells; a forged flag on another cell does not count) or that have no nbgrader metadata."""
    lines: set[str] = set()
    for cell in submitted.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta or meta.get("grade_id") in answer_ids:
            lines |= set(_lines(str(cell.get("source", ""))))
    return lines


def answer_ids(source: nbformat.NotebookNode) -> set[str]:
    """The grade ids of the answer cells of ``source`` (``solution`` and not locked)."""
    return {str(m.get("grade_id")) for m in (c.get("metadata", {}).get("nbgrader", {}) for c in source.cells)
            if m.get("solution") and not m.get("locked")}


def shown_lines(path: Path) -> list[tuple[str, str]]:
    """[(where, stripped line)] of a feedback file as a reader sees it: ``.html`` (tags removed, entities decoded,
    each line placed in its cell) or ``.ipynb`` (sources and text outputs). An unreadable notebook is read as
    plain text, so nothing in it escapes the check."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            nb = nbformat.reads(text, as_version=4)
        except Exception:  # not a notebook: every line of the file is checked as it is
            return [("page", line) for line in _lines(text)]
        return [(where, line) for where, body in _notebook_cells(nb, True) for line in _lines(body)]
    parser = _CellText()
    parser.feed(text)
    parser.close()
    return [(where, line) for where, body in parser.cells for line in _lines(body)]


def find_leaks(path: Path, material: set[str], own: Iterable[str] = ()) -> list[Leak]:
    """Every line of the feedback file ``path`` that is hidden ``material`` and not in ``own``, in file order."""
    mine = set(own)
    return [Leak(path, where, line) for where, line in shown_lines(path) if line in material and line not in mine]


def check_feedback(course_dir: Path, assignment: str, files: Sequence[Path]) -> list[Leak]:
    """Every hidden line shown by the feedback ``files`` of ``assignment``, each with its file and cell.

    ``files`` are ``feedback/<student>/<assignment>/<notebook>.html`` (or ``.ipynb``); the hidden material comes
    from ``source/<assignment>/<notebook>.ipynb`` against ``release/<assignment>/<notebook>.ipynb``, the student's
    own lines from ``submitted/<student>/<assignment>/<notebook>.ipynb``.

    Raises:
        FileNotFoundError: if the source or the release notebook of a feedback file is missing (release first).
    """
    found: list[Leak] = []
    material: dict[str, tuple[set[str], set[str]]] = {}
    for path in files:
        name = path.with_suffix(".ipynb").name
        if name not in material:
            source = _read(course_dir / "source" / assignment / name)
            release = _read(course_dir / "release" / assignment / name)
            material[name] = (hidden_material(source, release), answer_ids(source))
        lines, answers = material[name]
        submitted = course_dir / "submitted" / path.parent.parent.name / assignment / name
        found += find_leaks(path, lines, _submitted_lines(submitted, answers))
    return found


def _read(path: Path) -> nbformat.NotebookNode:
    if not path.is_file():
        raise FileNotFoundError(f"the leak check needs {path}; run 'autograd-lab course release' first")
    return nbformat.read(path, as_version=4)


def _submitted_lines(path: Path, answers: set[str]) -> set[str]:
    """:func:`own_lines` of the submitted notebook at ``path``; none if it is missing or damaged."""
    try:
        return own_lines(nbformat.read(path, as_version=4), answers)
    except Exception:  # a missing or damaged submission: the student typed nothing the check can credit
        return set()


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _notebook_cells(nb: nbformat.NotebookNode, outputs: bool) -> list[tuple[str, str]]:
    """[(where, text)] for each cell's source and, if ``outputs``, each text output."""
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        where = f"cell {number}" + (f" ({gid})" if gid else "")
        found.append((where, str(cell.get("source", ""))))
        for out in cell.get("outputs", []) if outputs else []:
            texts = [out.get("text", "")] if out.get("output_type") == "stream" else list(out.get("data", {}).values())
            texts += [out.get("evalue", ""), *out.get("traceback", [])] if out.get("output_type") == "error" else []
            found += [(where, t if isinstance(t, str) else "".join(map(str, t))) for t in texts if t]
    return found


class _CellText(html.parser.HTMLParser):
    """The text of an nbconvert page, split by notebook cell (``div.cell`` in the classic template that nbgrader's
    feedback extends, ``div.jp-Cell`` in the lab one); a grade cell is named by its ``<a name>``. Scripts, styles and
    comments count as text too: a student can read the file's source."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[tuple[str, list[str]]] = [("page", [])]
        self._number = 0
        self._depth = 0  # open <div>s of the current cell; 0 outside any cell
        self._named = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        name = dict(attrs).get("name")
        if tag == "a" and self._depth and name and not self._named:
            where, body = self.parts[-1]
            self.parts[-1] = (f"{where} ({name.removeprefix('comment-')})", body)
            self._named = True
        if tag != "div":
            return
        if self._depth:
            self._depth += 1
        elif {"cell", "jp-Cell"} & set((dict(attrs).get("class") or "").split()):
            self._number += 1
            self._depth, self._named = 1, False
            self.parts.append((f"cell {self._number}", []))

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._depth:
            self._depth -= 1
            if not self._depth:
                self.parts.append(("page", []))

    def handle_data(self, data: str) -> None:
        self.parts[-1][1].append(data)

    @property
    def cells(self) -> list[tuple[str, str]]:
        """[(where, text)] in page order."""
        return [(where, "".join(body)) for where, body in self.parts]

    def handle_comment(self, data: str) -> None:
        self.handle_data("\n" + data + "\n")
