"""``autograd-lab course setup``: fill a learner's workspace with the released notebooks, never overwriting.

The release in ``notebooks/`` is tracked by git and replaced by every course update; learners work on copies in a
git-ignored workspace (``workspace/`` by default). Setup copies only the notebooks the workspace does not have yet,
so a course update adds new chapters and never clobbers a half-done notebook.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SetupResult:
    """File names copied into the workspace (``new``) and left alone because they already exist (``kept``)."""

    workspace: Path
    new: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for the terminal."""
        lines = [f"workspace: {self.workspace}"]
        lines += [f"  new   {name}" for name in self.new]
        lines += [f"  kept  {name} (already there; your work is untouched)" for name in self.kept]
        if not self.new:
            lines.append("  nothing new to copy")
        return "\n".join(lines)


def setup_workspace(notebooks_dir: Path, workspace: Path) -> SetupResult:
    """Copy every ``notebooks_dir/*.ipynb`` into ``workspace`` unless a file of that name is already there.

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
        if dest.exists():
            result.kept.append(src.name)
            continue
        shutil.copyfile(src, dest)
        result.new.append(src.name)
    return result
