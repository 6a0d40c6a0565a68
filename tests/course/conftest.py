"""Shared helpers for the course tests: temporary copies of a course root, never the real gradebook."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "assignments"
FIXTURE_SOURCE = Path(__file__).parent / "fixtures" / "course" / "source"


def copy_course(dest: Path, source_dir: Path = COURSE / "source", which: tuple[str, ...] = ()) -> Path:
    """A fresh course root at ``dest``: the real nbgrader_config.py plus the chosen assignments of ``source_dir``."""
    dest.mkdir(parents=True)
    shutil.copy(COURSE / "nbgrader_config.py", dest)
    for folder in sorted(source_dir.iterdir()):
        if folder.is_dir() and (not which or folder.name in which):
            shutil.copytree(folder, dest / "source" / folder.name)
    return dest
