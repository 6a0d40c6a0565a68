"""``autograd-lab course setup``: fill a learner's workspace with the released notebooks, never overwriting.

The release in ``notebooks/`` is tracked by git and replaced by every course update; learners work on copies in a
git-ignored workspace (``workspace/`` by default). Setup copies only the notebooks the workspace does not have yet,
so a course update adds new chapters and never clobbers a half-done notebook.

A renumbered chapter gets a new file name (second edition: ``09_to_the_microcontroller.ipynb`` became
``12_to_the_microcontroller.ipynb``, and 09-11 are new chapters). Setup then copies the new name and keeps the old
file untouched; the summary says which of the learner's notebooks belong to a chapter that moved.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

#: First-edition notebook names and the name the same chapter has now.
RENAMED = {"09_to_the_microcontroller.ipynb": "12_to_the_microcontroller.ipynb"}


@dataclass
class SetupResult:
    """What setup did, by file name.

    Attributes:
        new: copied into the workspace.
        kept: already there, left alone (a learner's work is never overwritten).
        moved: ``(old, new)`` for a learner's notebook of a chapter that now has another file name.
    """

    workspace: Path
    new: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for the terminal."""
        lines = [f"workspace: {self.workspace}"]
        lines += [f"  new   {name}" for name in self.new]
        lines += [f"  kept  {name} (already there; your work is untouched)" for name in self.kept]
        lines += [
            f"  moved {old} is now {new}: your {old} is kept as it was; copy your answers over if you like"
            for old, new in self.moved
        ]
        if not self.new:
            lines.append("  nothing new to copy")
        return "\n".join(lines)


def setup_workspace(notebooks_dir: Path, workspace: Path) -> SetupResult:
    """Copy every ``notebooks_dir/*.ipynb`` into ``workspace`` unless something of that name is already there.

    "Something" includes a symbolic link, even a broken one, and a file created while setup runs: each copy is
    opened with exclusive creation, so an existing path is never written through.

    Raises:
        FileNotFoundError: if ``notebooks_dir`` holds no notebooks (wrong folder, or the release was not built).
    """
    release = sorted(notebooks_dir.glob("*.ipynb"))
    if not release:
        raise FileNotFoundError(f"no released notebooks (*.ipynb) in {notebooks_dir}; run this from the repository "
                                f"root or pass --notebooks")
    workspace.mkdir(parents=True, exist_ok=True)
    result = SetupResult(workspace)
    for src in release:
        dest = workspace / src.name
        if os.path.lexists(dest) or not _copy_new(src, dest):
            result.kept.append(src.name)
        else:
            result.new.append(src.name)
    released = {src.name for src in release}
    for old, new in RENAMED.items():
        if new in released and old not in released and os.path.lexists(workspace / old):
            result.moved.append((old, new))
    return result


def _copy_new(src: Path, dest: Path) -> bool:
    """Copy ``src`` to a new file ``dest``; False (and nothing written) if ``dest`` appeared in the meantime."""
    try:
        with open(src, "rb") as fin, open(dest, "xb") as fout:
            shutil.copyfileobj(fin, fout)
    except FileExistsError:
        return False
    return True
