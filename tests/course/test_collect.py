"""`course collect`: submissions in students/<id>/<assignment>/*.ipynb, from a folder or zip; bad layouts are named."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from autograd_lab.course.instructor import CourseError, collect


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    (root / "source" / "01_graphs").mkdir(parents=True)
    return root


def make_zip(path: Path, entries: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in entries.items():
            z.writestr(name, text)
    return path


def test_zip_submissions_land_in_submitted(course: Path, tmp_path: Path) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}",
                                         "students/bob/01_graphs/01_graphs.ipynb": "{}"})
    assert collect(course, z) == [("ada", "01_graphs"), ("bob", "01_graphs")]
    assert (course / "submitted" / "ada" / "01_graphs" / "01_graphs.ipynb").read_text() == "{}"


def test_folder_submissions_replace_an_earlier_collection(course: Path, tmp_path: Path) -> None:
    nb = tmp_path / "in" / "students" / "ada" / "01_graphs" / "01_graphs.ipynb"
    nb.parent.mkdir(parents=True)
    old = course / "submitted" / "ada" / "01_graphs" / "stale.ipynb"
    old.parent.mkdir(parents=True)
    old.write_text("old")
    nb.write_text("new")
    collect(course, tmp_path / "in")
    assert not old.exists()
    assert (course / "submitted" / "ada" / "01_graphs" / "01_graphs.ipynb").read_text() == "new"


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("students/ada/01_graphs.ipynb", "bad entry 'students/ada/01_graphs.ipynb'"),
        ("students/ada/01_graphs/notes.txt", "bad entry 'students/ada/01_graphs/notes.txt'"),
        ("students/ada/99_unknown/99_unknown.ipynb", "unknown assignment '99_unknown'"),
        ("students/a b/01_graphs/01_graphs.ipynb", "student id 'a b'"),
        ("students/../../evil/01_graphs/x.ipynb", "absolute or '..' paths are refused"),
    ],
)
def test_malformed_zip_names_the_bad_entry(course: Path, tmp_path: Path, entry: str, complaint: str) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ok/01_graphs/01_graphs.ipynb": "{}", entry: "{}"})
    with pytest.raises(CourseError, match=complaint.replace(".", r"\.").replace("?", r"\?")):
        collect(course, z)
    assert not (course / "submitted").exists()  # nothing half-collected


@pytest.mark.parametrize("name", ["wrongname.ipynb", "01_Graphs.ipynb", "01_graphs (1).ipynb"])
def test_a_notebook_not_named_like_the_release_is_refused_naming_the_expected_name(
    course: Path, tmp_path: Path, name: str
) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ok/01_graphs/01_graphs.ipynb": "{}",
                                         f"students/dan/01_graphs/{name}": "{}"})
    with pytest.raises(CourseError, match=rf"bad entry 'students/dan/01_graphs/{re.escape(name)}'.*expected "
                                          r"01_graphs\.ipynb \(the released notebook name"):
        collect(course, z)
    assert not (course / "submitted").exists()


def test_the_expected_name_comes_from_the_release_when_there_is_one(course: Path, tmp_path: Path) -> None:
    (course / "release" / "01_graphs").mkdir(parents=True)
    (course / "release" / "01_graphs" / "graphs.ipynb").write_text("{}")
    z = make_zip(tmp_path / "subs.zip", {"students/dan/01_graphs/01_graphs.ipynb": "{}"})
    with pytest.raises(CourseError, match=r"expected graphs\.ipynb"):
        collect(course, z)
    assert collect(course, make_zip(tmp_path / "ok.zip", {"students/dan/01_graphs/graphs.ipynb": "{}"})) == [
        ("dan", "01_graphs")]


def test_zip_without_students_folder_and_non_zip_file_are_refused(course: Path, tmp_path: Path) -> None:
    with pytest.raises(CourseError, match="no top-level 'students/' folder"):
        collect(course, make_zip(tmp_path / "flat.zip", {"ada.ipynb": "{}"}))
    (tmp_path / "bad.zip").write_text("not a zip")
    with pytest.raises(CourseError, match="not a readable zip file"):
        collect(course, tmp_path / "bad.zip")


def test_cli_collect_reports_the_bad_entry_and_exits_1(course: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/extra/01_graphs.ipynb": "{}"})
    assert main(["course", "collect", str(z), "--course-dir", str(course)]) == 1
    err = capsys.readouterr().err
    assert "autograd-lab course: error: bad entry 'students/ada/01_graphs/extra/01_graphs.ipynb'" in err


def test_cli_without_course_config_says_where_it_looked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    assert main(["course", "grades", "--course-dir", str(tmp_path)]) == 1
    assert "has no nbgrader_config.py; pass --course-dir" in capsys.readouterr().err
