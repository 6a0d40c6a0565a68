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
- :func:`kernel_memory_limit_argument` builds the kernel argument that caps the grading kernel's address space
  (nbgrader has no memory limit, nbgrader#1429).
"""

from __future__ import annotations

import copy
import os

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import DeduplicateIds, NbGraderPreprocessor
from traitlets import Integer, Unicode

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
