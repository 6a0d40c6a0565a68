"""``course release``: nbgrader's ``generate_assignment`` for each assignment, copied flat to ``notebooks/``."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from autograd_lab.course.grading import stubs
from autograd_lab.course.grading.testcell import AuthoringError
from autograd_lab.course.instructor.course_root import (
    CourseError,
    assignments,
    load_config,
    source_notebook,
    tail,
    tools_on_path,
)


def release(course_dir: Path, notebooks_dir: Path, which: Sequence[str] = ()) -> list[Path]:
    """Generate the student version of each assignment and copy it flat to ``notebooks_dir/<assignment>.ipynb``.

    Runs nbgrader's ``generate_assignment`` in this process (one process for the whole course is ~10x faster than
    one ``nbgrader`` call per assignment); the release also stays in ``course_dir/release`` for nbgrader's exchange.
    First builds each assignment's copies of the library for the grading sandbox
    (:func:`autograd_lab.course.grading.stubs.course_libraries`), which also checks its ``replaces=`` names.
    ``which``: assignment ids (default: all). Returns the written notebook paths.

    Raises:
        CourseError: if an assignment does not hold its notebook ``<assignment>.ipynb``, nbgrader fails, or a hidden
            test's ``replaces=`` names something that cannot be stubbed.
    """
    from nbgrader.apps import NbGraderAPI

    names = list(which or assignments(course_dir))
    for name in names:
        # The grading sandbox's libraries, built before any student copy exists (a replaces= typo stops here) and
        # now rather than in the first grading's serial start.
        try:
            stubs.course_libraries(course_dir, source_notebook(course_dir, name))
        except (AuthoringError, stubs.StubError) as exc:
            raise CourseError(f"assignment {name}: {exc}") from None
    notebooks_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tools_on_path():
        api = NbGraderAPI(config=load_config(course_dir))
        for name in names:
            result = api.generate_assignment(name, force=True)
            if not result["success"]:
                raise CourseError(f"generate_assignment {name} failed:\n{tail(result['log'] + result['error'])}")
            dest = notebooks_dir / f"{name}.ipynb"
            shutil.copyfile(course_dir / "release" / name / f"{name}.ipynb", dest)
            written.append(dest)
    return written
