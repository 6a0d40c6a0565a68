"""`course collect`: submissions in students/<id>/<assignment>/*.ipynb, from a folder or zip; bad layouts are named;
each submission's time is recorded as nbgrader's timestamp.txt; nbformat 3 is converted; ids are checked against
the class list."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograd_lab.course.instructor import Collection, CourseError, collect


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
    assert [(s.student, s.assignment) for s in collect(course, z).submissions] == [("ada", "01_graphs"),
                                                                                    ("bob", "01_graphs")]
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
    assert sorted(p.name for p in old.parent.iterdir()) == ["01_graphs.ipynb", "timestamp.txt"]
    assert (course / "submitted" / "ada" / "01_graphs" / "01_graphs.ipynb").read_text() == "new"


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("students/ada/01_graphs.ipynb", "bad entry 'students/ada/01_graphs.ipynb'"),
        ("students/ada/01_graphs/notes.txt", "bad entry 'students/ada/01_graphs/notes.txt'"),
        ("students/ada/timestamp.txt", "bad entry 'students/ada/timestamp.txt'"),
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
    ok = collect(course, make_zip(tmp_path / "ok.zip", {"students/dan/01_graphs/graphs.ipynb": "{}"}))
    assert [(s.student, s.assignment) for s in ok.submissions] == [("dan", "01_graphs")]


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


# --- submission times, nbformat 3, the class list ----------------------------------------------------------------

NB3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"cells": [
    {"cell_type": "code", "input": "x = 1", "language": "python", "metadata": {}, "outputs": [],
     "collapsed": False}], "metadata": {}}]}


def collected(collection: Collection) -> list[tuple[str, str, dt.datetime, str]]:
    return [(s.student, s.assignment, s.submitted_at, s.time_from) for s in collection.submissions]


def test_a_timestamp_file_beside_the_notebook_is_the_submission_time(course: Path, tmp_path: Path) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}",
                                         "students/ada/01_graphs/timestamp.txt": "2026-12-01 18:30:00 Europe/Berlin",
                                         "students/bob/01_graphs/01_graphs.ipynb": "{}",
                                         "students/bob/01_graphs/timestamp.txt": "2026-12-01 17:59:59.5 UTC",
                                         "students/cy/01_graphs/01_graphs.ipynb": "{}",
                                         "students/cy/01_graphs/timestamp.txt": "2026-12-01 18:30:00 +0100"})
    assert collected(collect(course, z)) == [
        ("ada", "01_graphs", dt.datetime(2026, 12, 1, 17, 30), "timestamp.txt"),
        ("bob", "01_graphs", dt.datetime(2026, 12, 1, 17, 59, 59, 500000), "timestamp.txt"),
        ("cy", "01_graphs", dt.datetime(2026, 12, 1, 17, 30), "timestamp.txt")]  # nbgrader would read 100 seconds
    stamp = course / "submitted" / "ada" / "01_graphs" / "timestamp.txt"
    assert stamp.read_text() == "2026-12-01 17:30:00.000000 UTC"  # nbgrader's Exchange.timestamp_format, in UTC


def test_without_a_timestamp_file_a_zip_entry_date_is_read_as_local_time(
    course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Etc/GMT-2")  # UTC+2 (POSIX zone names invert the sign)
    time.tzset()
    try:
        path = tmp_path / "subs.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(zipfile.ZipInfo("students/ada/01_graphs/01_graphs.ipynb", (2026, 11, 30, 12, 0, 0)), "{}")
        assert collected(collect(course, path)) == [
            ("ada", "01_graphs", dt.datetime(2026, 11, 30, 10, 0), "file time")]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert (course / "submitted" / "ada" / "01_graphs" / "timestamp.txt").read_text() == \
        "2026-11-30 10:00:00.000000 UTC"


def test_without_a_timestamp_file_a_folder_notebook_gives_its_modification_time(course: Path, tmp_path: Path) -> None:
    nb = tmp_path / "in" / "students" / "ada" / "01_graphs" / "01_graphs.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text("{}")
    moment = dt.datetime(2026, 12, 1, 9, 15, tzinfo=dt.timezone.utc)
    os.utime(nb, (moment.timestamp(), moment.timestamp()))
    collection = collect(course, tmp_path / "in")
    assert collected(collection) == [("ada", "01_graphs", dt.datetime(2026, 12, 1, 9, 15), "file time")]
    assert str(collection.submissions[0]) == ("collected ada/01_graphs (submitted 2026-12-01 09:15:00 UTC, from "
                                              "its file time)")


# dateutil words its own errors ("" below); ours are written out.
@pytest.mark.parametrize(("text", "why"), [("last tuesday-ish", ""),
                                            ("2026-12-01 18:00 Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
                                            ("", "it is empty")])
def test_an_unreadable_timestamp_file_is_named_and_nothing_is_copied(course: Path, tmp_path: Path, text: str,
                                                                     why: str) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}",
                                         "students/ada/01_graphs/timestamp.txt": text})
    with pytest.raises(CourseError, match=rf"bad entry 'students/ada/01_graphs/timestamp\.txt' in .*: "
                                          rf"'{re.escape(text)}' is not a time nbgrader can read \({re.escape(why)}"):
        collect(course, z)
    assert not (course / "submitted").exists()


def test_an_nbformat_3_notebook_is_converted_to_nbformat_4(course: Path, tmp_path: Path) -> None:
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/01_graphs.ipynb": json.dumps(NB3)})
    collection = collect(course, z)
    assert collection.submissions[0].converted
    assert str(collection.submissions[0]).endswith("file time, converted from nbformat 3)")
    nb = nbformat.read(course / "submitted" / "ada" / "01_graphs" / "01_graphs.ipynb", as_version=nbformat.NO_CONVERT)
    assert nb.nbformat == 4 and [(c.cell_type, c.source) for c in nb.cells] == [("code", "x = 1")]


def gradebook(course: Path, students: list[str], duedate: dt.datetime | None) -> None:
    from nbgrader.api import Gradebook

    from autograd_lab.course.instructor.course_root import tools_on_path

    with tools_on_path(), Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            gb.add_student(student)
        gb.add_assignment("01_graphs", duedate=duedate)


def test_ids_outside_the_class_list_and_late_submissions_are_warned_about(course: Path, tmp_path: Path) -> None:
    gradebook(course, ["ada", "bob"], dt.datetime(2026, 12, 1, 18, 0))
    z = make_zip(tmp_path / "subs.zip", {
        "students/ada/01_graphs/01_graphs.ipynb": "{}", "students/ada/01_graphs/timestamp.txt": "2026-12-01 17:00 UTC",
        "students/bob/01_graphs/01_graphs.ipynb": "{}", "students/bob/01_graphs/timestamp.txt": "2026-12-01 21:00 UTC",
        "students/zed/01_graphs/01_graphs.ipynb": "{}", "students/zed/01_graphs/timestamp.txt": "2026-12-04 18:00 UTC"})
    assert collect(course, z).warnings == [
        "not in the class list: zed (a typo in a folder name, or a student to add with 'nbgrader db student add ID')",
        "01_graphs was due 2026-12-01 18:00 UTC; late: bob (3.0 h late), zed (3.0 days late)"]


def test_an_assignment_without_a_due_date_is_warned_about(course: Path, tmp_path: Path) -> None:
    gradebook(course, ["ada"], None)
    warnings = collect(course, make_zip(tmp_path / "s.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}"})).warnings
    assert warnings == ["01_graphs has no due date, so no late penalty applies (nbgrader db assignment add 01_graphs "
                        "--duedate='YYYY-MM-DD HH:MM:SS UTC')"]


def test_without_a_gradebook_collect_says_there_is_no_class_list(course: Path, tmp_path: Path) -> None:
    warnings = collect(course, make_zip(tmp_path / "s.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}"})).warnings
    assert len(warnings) == 1 and warnings[0].startswith(f"no gradebook at {course / 'gradebook.db'} yet, so no class "
                                                         f"list to check the student ids against and no due dates")
    assert not (course / "gradebook.db").exists()  # the check creates none


def test_cli_collect_prints_each_submission_and_the_warnings(course: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    z = make_zip(tmp_path / "subs.zip", {"students/ada/01_graphs/01_graphs.ipynb": "{}",
                                         "students/ada/01_graphs/timestamp.txt": "2026-12-01 17:00 UTC"})
    assert main(["course", "collect", str(z), "--course-dir", str(course)]) == 0
    out, err = capsys.readouterr()
    assert out == "collected ada/01_graphs (submitted 2026-12-01 17:00:00 UTC, from its timestamp.txt)\n"
    assert err.startswith("autograd-lab course: warning: no gradebook at ")
