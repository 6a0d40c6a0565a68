"""nbgrader's Validate on whole notebooks: every test passes on the source, every test fails on the release.

Validate runs a notebook top to bottom in one kernel, as Jupyter does: a hidden part (``checks.hidden_test``) runs
its exercise and its judge there together, the same split the grader makes across two processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograd_lab.course.instructor.course_root import load_config, run_nbgrader

_SUCCESS = "Success!"


def validate(path: Path, invert: bool = False) -> tuple[bool, str]:
    """Run ``nbgrader validate`` on one notebook and read its verdict (the command exits 0 either way).

    Returns (passed, output): for ``invert=False`` passed means every test passes; for ``invert=True`` it means
    every test fails.
    """
    args = ["validate", str(path.resolve())] + (["--invert"] if invert else [])
    proc = run_nbgrader(path.parent, *args, check=False)
    return _SUCCESS in proc.stdout, proc.stdout + proc.stderr


def validate_notebooks(course_dir: Path, paths: Sequence[Path], invert: bool = False) -> dict[Path, dict]:
    """nbgrader's Validator, in this process, with the course configuration: {notebook: problems}.

    An empty dict for a notebook means it passed: every test passes (or with ``invert``, every test fails).
    Otherwise the keys say what went wrong: 'failed' / 'passed' (cells with their source and error), 'changed'
    (locked cells whose checksum changed), 'type_changed'. One process for all notebooks saves the startup cost
    of one ``nbgrader validate`` call each.
    """
    from nbgrader.validator import Validator

    config = load_config(course_dir)
    config.Validator.invert = invert
    validator = Validator(config=config)
    return {path: validator.validate(str(path)) for path in paths}
