"""`course setup`: the workspace gets new notebooks and never loses a learner's edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lab.course.learner.workspace import setup_workspace


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


def test_second_edition_renumbering_keeps_the_old_microcontroller_notebook(tmp_path: Path) -> None:
    """09_to_the_microcontroller became 12_...; 09-11 are new chapters with other names (docs/design.md)."""
    release, ws = tmp_path / "notebooks", tmp_path / "workspace"
    release.mkdir()
    ws.mkdir()
    (ws / "08_regularisation_and_optimizers.ipynb").write_text("my 08")
    (ws / "09_to_the_microcontroller.ipynb").write_text("my half-done first-edition 09")
    for name in ("08_regularisation_and_optimizers", "09_convolution", "10_recurrent", "11_define_and_run",
                 "12_to_the_microcontroller"):
        (release / f"{name}.ipynb").write_text(f"release {name}")
    result = setup_workspace(release, ws)
    assert result.new == ["09_convolution.ipynb", "10_recurrent.ipynb", "11_define_and_run.ipynb",
                          "12_to_the_microcontroller.ipynb"]
    assert result.kept == ["08_regularisation_and_optimizers.ipynb"]
    assert result.moved == [("09_to_the_microcontroller.ipynb", "12_to_the_microcontroller.ipynb")]
    assert (ws / "09_to_the_microcontroller.ipynb").read_text() == "my half-done first-edition 09"
    assert (ws / "08_regularisation_and_optimizers.ipynb").read_text() == "my 08"
    assert "moved 09_to_the_microcontroller.ipynb is now 12_to_the_microcontroller.ipynb" in result.summary()
    again = setup_workspace(release, ws)  # running setup twice changes nothing
    assert again.new == [] and len(again.kept) == 5


def test_a_symlink_in_the_workspace_is_never_written_through(tmp_path: Path) -> None:
    release, ws = tmp_path / "notebooks", tmp_path / "workspace"
    release.mkdir()
    ws.mkdir()
    (release / "03_engine.ipynb").write_text("release 03")
    elsewhere = tmp_path / "my_real_notebook.ipynb"
    elsewhere.write_text("my work, kept outside the workspace")
    (ws / "03_engine.ipynb").symlink_to(elsewhere)
    (release / "04_gradient_checking.ipynb").write_text("release 04")
    (ws / "04_gradient_checking.ipynb").symlink_to(tmp_path / "missing.ipynb")  # broken link
    result = setup_workspace(release, ws)
    assert result.kept == ["03_engine.ipynb", "04_gradient_checking.ipynb"] and result.new == []
    assert elsewhere.read_text() == "my work, kept outside the workspace"
    assert not (tmp_path / "missing.ipynb").exists()


def test_a_file_that_appears_during_setup_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    release, ws = tmp_path / "notebooks", tmp_path / "workspace"
    release.mkdir()
    (release / "00_welcome.ipynb").write_text("release 00")
    real_lexists = os.path.lexists

    def late_arrival(path: object) -> bool:  # the learner's editor saves between the check and the copy
        if str(path).endswith("00_welcome.ipynb"):
            Path(str(path)).write_text("saved by the editor just now")
            return False
        return real_lexists(path)

    monkeypatch.setattr(os.path, "lexists", late_arrival)
    result = setup_workspace(release, ws)
    assert result.kept == ["00_welcome.ipynb"]
    assert (ws / "00_welcome.ipynb").read_text() == "saved by the editor just now"
