"""Fail (exit 1) if notebooks/ differs from what `nbgrader generate_assignment` makes of assignments/source.

Usage: python scripts/check_notebooks_in_sync.py [--course-dir assignments] [--notebooks notebooks]
Fix a reported drift with `autograd-lab course release` and commit the result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograd_lab.course.instructor.sync import check_release_in_sync


def main(argv: list[str] | None = None) -> int:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course-dir", type=Path, default=root / "assignments")
    parser.add_argument("--notebooks", type=Path, default=root / "notebooks")
    args = parser.parse_args(argv)
    problems = check_release_in_sync(args.course_dir, args.notebooks)
    for problem in problems:
        print(problem)
    print("notebooks/ is in sync with the source" if not problems else
          f"{len(problems)} difference(s): run 'autograd-lab course release' and commit notebooks/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
