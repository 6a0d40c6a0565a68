"""Check that the committed student notebooks (``notebooks/``) are exactly what the source generates today.

The release is regenerated with nbgrader into a temporary copy of the course (the real gradebook is never
touched) and compared with ``notebooks/`` cell by cell: cell type, source, and the metadata that matters (nbgrader's
grade/solution/locked/grade_id/points/checksum, editable, deletable). Volatile metadata (execution timings,
kernel language versions, cell ids) is ignored.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from pathlib import Path

import nbformat

from autograd_lab.course.instructor.course_root import assignments
from autograd_lab.course.instructor.student_release import release

_KEPT_METADATA = ("nbgrader", "editable", "deletable")


def _cell_view(cell: nbformat.NotebookNode) -> dict:
    return {
        "cell_type": cell.cell_type,
        "source": cell.source,
        "metadata": {k: cell.metadata[k] for k in _KEPT_METADATA if k in cell.metadata},
        "outputs": len(cell.get("outputs", [])),
    }


def compare_notebooks(expected: Path, actual: Path) -> list[str]:
    """Differences between two notebooks, each naming the notebook and the cell (index and grade_id)."""
    a = nbformat.read(expected, as_version=4)
    b = nbformat.read(actual, as_version=4)
    problems = []
    kernel = b.metadata.get("kernelspec", {}).get("name")
    if kernel != a.metadata.get("kernelspec", {}).get("name"):
        problems.append(f"{actual.name}: kernelspec name {kernel!r}, expected {a.metadata.kernelspec.name!r}")
    for i, (ca, cb) in enumerate(zip(a.cells, b.cells)):
        va, vb = _cell_view(ca), _cell_view(cb)
        if va == vb:
            continue
        gid = ca.metadata.get("nbgrader", {}).get("grade_id", "no grade_id")
        where = f"{actual.name}: cell {i} ({gid})"
        for key in ("cell_type", "metadata", "outputs"):
            if va[key] != vb[key]:
                problems.append(f"{where}: {key} is {vb[key]!r}, regenerated {va[key]!r}")
        if va["source"] != vb["source"]:
            diff = difflib.unified_diff(vb["source"].splitlines(), va["source"].splitlines(),
                                        "committed", "regenerated", lineterm="", n=1)
            problems.append(f"{where}: source differs\n    " + "\n    ".join(diff))
    if len(a.cells) != len(b.cells):
        problems.append(f"{actual.name}: {len(b.cells)} cells committed, {len(a.cells)} regenerated")
    return problems


def check_release_in_sync(course_dir: Path, notebooks_dir: Path) -> list[str]:
    """Regenerate the release in a temporary course copy; return every difference from ``notebooks_dir``."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "course"
        copy.mkdir()
        shutil.copy(course_dir / "nbgrader_config.py", copy)
        shutil.copytree(course_dir / "source", copy / "source", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        fresh = release(copy, Path(tmp) / "notebooks", assignments(copy))
        problems = []
        for path in fresh:
            committed = notebooks_dir / path.name
            if not committed.is_file():
                problems.append(f"{committed}: missing; run 'autograd-lab course release'")
            else:
                problems += compare_notebooks(path, committed)
        expected = {p.name for p in fresh}
        problems += [f"{p}: no source assignment generates it (stale)" for p in sorted(notebooks_dir.glob("*.ipynb"))
                     if p.name not in expected]
    return problems
