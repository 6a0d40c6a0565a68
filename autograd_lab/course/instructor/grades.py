"""``course grades``: the gradebook exported to CSV by nbgrader."""

from __future__ import annotations

from pathlib import Path

from autograd_lab.course.instructor.course_root import run_nbgrader


def export_grades(course_dir: Path, csv_path: Path) -> Path:
    """Export the gradebook to ``csv_path`` (one row per student and assignment) and return the path.

    Raises:
        CourseError: if ``nbgrader export`` fails.
    """
    run_nbgrader(course_dir, "export", f"--to={csv_path.resolve()}")
    return csv_path
