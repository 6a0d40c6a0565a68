"""`course setup`: the workspace gets new notebooks and never loses a learner's edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lab.course.workspace import setup_workspace


def test_setup_copies_new_notebooks_and_keeps_existing_work(tmp_path: Path) -> None:
    release, ws = tmp_path / "notebooks", tmp_path / "workspace"
    release.mkdir()
    (release / "00_a.ipynb").write_text("release 00 v1")
    first = setup_workspace(release, ws)
    assert first.new == ["00_a.ipynb"] and first.kept == []

    (ws / "00_a.ipynb").write_text("half-done work")
    (release / "00_a.ipynb").write_text("release 00 v2")  # a course update
    (release / "01_b.ipynb").write_text("release 01")
    second = setup_workspace(release, ws)
    assert second.new == ["01_b.ipynb"] and second.kept == ["00_a.ipynb"]
    assert (ws / "00_a.ipynb").read_text() == "half-done work"
    assert (ws / "01_b.ipynb").read_text() == "release 01"
    assert "kept  00_a.ipynb" in second.summary() and "new   01_b.ipynb" in second.summary()


def test_setup_without_release_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no released notebooks .* in .*nowhere"):
        setup_workspace(tmp_path / "nowhere", tmp_path / "ws")


def test_cli_setup_prints_new_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    release = tmp_path / "notebooks"
    release.mkdir()
    (release / "00_a.ipynb").write_text("{}")
    args = ["course", "setup", str(tmp_path / "ws"), "--notebooks", str(release)]
    assert main(args) == 0
    assert "new   00_a.ipynb" in capsys.readouterr().out
    assert main(args) == 0
    assert "kept  00_a.ipynb (already there; your work is untouched)" in capsys.readouterr().out
