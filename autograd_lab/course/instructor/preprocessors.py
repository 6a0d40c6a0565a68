"""nbgrader preprocessors and settings that make autograding robust against damaged submissions.

Used from ``assignments/nbgrader_config.py``:

- :class:`RestoreMissingCells` puts back every nbgrader cell (read-only setup, answer, test) that a student
  deleted, copied from the released notebook, in release order. nbgrader's own ``add_missing_cells`` restores only
  graded cells and fails with KeyError when the cell before the deleted one is not graded (nbgrader 0.9.6).
- :class:`DeduplicateCellIds` fixes nbgrader's duplicate-id handling, which crashes OverwriteCells.
- :class:`LimitOutputSize` caps the bytes of output kept per cell; nbgrader's ``LimitOutput`` counts lines, so one
  long line of megabytes would pass it.
- :class:`ShortTracebacks` keeps only the last line of each traceback in feedback, because traceback context
  lines would quote hidden tests.
- :class:`NeutraliseOutputs` keeps only plain text and checked PNG images of every output in feedback and shows
  student markdown as literal text, so no HTML, SVG or JavaScript that a submission produced runs in the page.
- :func:`kernel_memory_limit_argument` builds the kernel argument that caps the grading kernel's address space
  (nbgrader has no memory limit, nbgrader#1429).
"""

from __future__ import annotations

import base64
import binascii
import copy
import os
import re

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import DeduplicateIds, NbGraderPreprocessor
from traitlets import Bool, Integer, Unicode

RESTORED_NOTICE = "# autograder: this cell was missing from the submission and was restored from the release.\n"


def grade_id(cell: NotebookNode) -> str | None:
    """The nbgrader ``grade_id`` of ``cell``, or None for a cell without nbgrader metadata."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if not (meta.get("grade") or meta.get("solution") or meta.get("locked") or meta.get("task")):
        return None
    return meta.get("grade_id")


def kernel_memory_limit_argument(max_bytes: int) -> str:
    """An ipykernel command-line argument that limits the kernel's address space to ``max_bytes`` bytes.

    The limit (``RLIMIT_AS``, soft = hard) is set by the kernel at startup, before any submitted code runs, so an
    allocation beyond it raises ``MemoryError`` in the offending cell and the rest of the notebook still runs.
    """
    if max_bytes <= 0:
        raise ValueError(f"kernel memory limit must be positive, got {max_bytes} bytes")
    line = f"import resource as _r; _r.setrlimit(_r.RLIMIT_AS, ({max_bytes}, {max_bytes})); del _r"
    return f"--IPKernelApp.exec_lines={line}"


class RestoreMissingCells(NbGraderPreprocessor):
    """Re-insert nbgrader cells that are missing from a submission, copied from the released notebook.

    Each missing cell goes right after the nearest earlier release cell that the submission still has (or first),
    so a deleted setup cell is back before the code that needs it. OverwriteCells, which runs next, then resets
    locked cells to the gradebook's source. If the release notebook is absent, nothing is restored (a warning).
    """

    release_root = Unicode("", help="Folder holding <assignment>/<notebook>.ipynb as released.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        info = resources["nbgrader"]
        path = os.path.join(self.release_root, info["assignment"], info["notebook"] + ".ipynb")
        if not os.path.isfile(path):
            self.log.warning("RestoreMissingCells: no release notebook at %s; deleted cells cannot be restored", path)
            return nb, resources
        release = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        present = {grade_id(cell) for cell in nb.cells} - {None}
        cells = [c for c in release.cells if grade_id(c) is not None]
        order = [grade_id(c) for c in cells]
        anchor = -1  # index in nb.cells of the last release cell seen so far that the submission has
        for k, (gid, cell) in enumerate(zip(order, cells)):
            if gid in present:
                anchor = _index_of(nb, gid)
                continue
            if anchor >= 0:
                position = anchor + 1
            else:  # nothing before it survived: go just before the next surviving cell
                later = [g for g in order[k + 1:] if g in present]
                position = _index_of(nb, later[0]) if later else len(nb.cells)
            self.log.warning("Cell '%s' was missing from the submission; restored from the release", gid)
            restored = copy.deepcopy(cell)
            if restored.cell_type == "code":
                restored.source = RESTORED_NOTICE + restored.source
                restored.outputs = []
                restored.execution_count = None
            nb.cells.insert(position, restored)
            anchor = position
            present.add(gid)
        return nb, resources


def _index_of(nb: NotebookNode, gid: str | None) -> int:
    return next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == gid)


class DeduplicateCellIds(DeduplicateIds):
    """nbgrader's DeduplicateIds (keep the last cell of each grade_id), then drop the emptied metadata.

    DeduplicateIds leaves ``metadata.nbgrader = {}`` on the earlier copies, on which OverwriteCells'
    ``add_missing_cells`` fails with KeyError 'grade_id' (nbgrader 0.9.6); without the key the copy is a plain,
    ungraded cell, so its points cannot count twice.
    """

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        nb, resources = super().preprocess(nb, resources)
        for cell in nb.cells:
            if cell.get("metadata", {}).get("nbgrader", None) == {}:
                del cell.metadata["nbgrader"]
        return nb, resources


class LimitOutputSize(NbGraderPreprocessor):
    """Truncate each code cell's text outputs so that together they keep at most ``max_bytes`` characters."""

    max_bytes = Integer(100_000, help="Maximum characters of output kept per cell (-1: no limit).").tag(config=True)

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        if self.max_bytes < 0 or cell.cell_type != "code":
            return cell, resources
        budget = self.max_bytes
        for output in cell.outputs:
            if output.output_type == "stream":
                output.text, budget = _clip(output.text, budget)
            elif output.output_type in ("execute_result", "display_data"):
                for mime, value in output.get("data", {}).items():
                    if isinstance(value, str) and mime.startswith("text/"):
                        output.data[mime], budget = _clip(value, budget)
        return cell, resources


class ShortTracebacks(NbGraderPreprocessor):
    """Replace each error's traceback by its last line (``Name: message``) for feedback.

    A traceback quotes the source lines around the failure, so a failing hidden test would show its own code in
    the feedback even after ClearHiddenTests removed it from the cell.
    """

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        if cell.cell_type == "code":
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


def _clip(text: str, budget: int) -> tuple[str, int]:
    if len(text) <= budget:
        return text, budget - len(text)
    dropped = len(text) - budget
    return text[:budget] + f"\n... output truncated by the autograder ({dropped} characters dropped) ...\n", 0


#: What :class:`NeutraliseOutputs` keeps of a rich output: nbconvert escapes plain text, and a PNG is only shown
#: after its bytes are checked.
SAFE_MIME_TYPES = ("text/plain", "image/png")
REMOVED_NOTICE = "[{kinds} output removed from the feedback: only text and PNG images are shown]"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class NeutraliseOutputs(NbGraderPreprocessor):
    """Make a graded notebook safe to render as feedback HTML: nothing a submission produced can run in the page.

    - every display and result output keeps only ``text/plain`` and a ``image/png`` whose data is base64 of a real
      PNG (HTML, SVG, JavaScript, Markdown, LaTeX and widget data are dropped, with a plain-text notice naming what
      was removed); output metadata is dropped (templates put it into attributes);
    - stream names other than stdout/stderr, unknown output types and odd cell ids or tags (templates put them into
      attributes and class names) are replaced or dropped;
    - graded test cells keep only their error output (``drop_test_output``): what a student's code printed while a
      hidden test ran may show the test's secret inputs;
    - markdown answer cells and raw cells are shown as literal text, their attachments dropped: Markdown passes
      HTML through. (The grader builds the graded notebook from the instructor's source, so every other markdown
      cell is the instructor's.)

    Images shown by the instructor's own cells are PNG in this course (matplotlib), so they stay; graphviz SVG is
    dropped from feedback, whoever drew it, because its labels may come from the student's objects.
    """

    drop_test_output = Bool(True, help="Drop the printed and displayed output of graded test cells (the error "
                                       "line stays): it may show the hidden test's secret inputs.").tag(config=True)

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        if "id" in cell and not _SAFE_NAME.match(str(cell["id"])):
            cell["id"] = f"cell-{index}"
        tags = cell.get("metadata", {}).get("tags")
        if tags is not None:
            cell.metadata["tags"] = [t for t in tags if isinstance(t, str) and _SAFE_NAME.match(t)]
        if cell.cell_type == "code":
            outputs = cell.get("outputs", [])
            if self.drop_test_output and cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                # What ran during a graded test includes the student's code printing the hidden test's inputs,
                # which would let a resubmission hard-code the outputs for them: keep only the verdict.
                outputs = [o for o in outputs if o.get("output_type") == "error"]
            cell.outputs = [o for o in (_neutral_output(out) for out in outputs) if o is not None]
        elif cell.get("metadata", {}).get("nbgrader", {}).get("solution") or cell.cell_type == "raw":
            text = cell.source if isinstance(cell.source, str) else "".join(cell.source)
            cell.source = "\n".join("    " + line for line in text.splitlines()) or "    "
            cell.cell_type = "markdown"
            cell.pop("attachments", None)
        return cell, resources


def _neutral_output(output: NotebookNode) -> NotebookNode | None:
    kind = output.get("output_type")
    if kind == "stream":
        if output.get("name") not in ("stdout", "stderr"):
            output["name"] = "stdout"
        output["text"] = str(output.get("text", ""))
        return output
    if kind == "error":
        output["ename"] = str(output.get("ename", ""))
        output["evalue"] = str(output.get("evalue", ""))
        output["traceback"] = [str(line) for line in output.get("traceback", [])]
        return output
    if kind not in ("display_data", "execute_result"):
        return None
    data = output.get("data", {})
    kept = {}
    text = data.get("text/plain")
    if isinstance(text, (str, list)):
        kept["text/plain"] = text if isinstance(text, str) else "".join(map(str, text))
    png = data.get("image/png")
    if isinstance(png, str) and _is_png(png):
        kept["image/png"] = png
    removed = sorted(mime for mime in data if mime not in kept)
    if removed:
        notice = REMOVED_NOTICE.format(kinds=", ".join(removed))
        kept["text/plain"] = (kept.get("text/plain", "") + "\n" + notice).lstrip("\n")
    output["data"] = kept
    output["metadata"] = {}
    return output


def _is_png(data: str) -> bool:
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return raw.startswith(_PNG_SIGNATURE)
