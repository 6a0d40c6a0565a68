"""Hidden-test seeds (grading/seeds.py): HMAC of the secret over assignment, student, answers and test; the secret
is read only where students cannot reach it."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from autograd_lab.course import checks
from autograd_lab.course.grading import seeds

SECRET = seeds.Secret(b"instructor-secret", False)
ANSWERS = {"f_code": "def f(x):\n    return 2 * x\n"}


def test_a_seed_is_the_hmac_of_assignment_student_answers_and_test() -> None:
    digest = hashlib.sha256(b'[["f_code", "def f(x):\\n    return 2 * x\\n"]]').hexdigest()
    expected = hmac.new(b"instructor-secret", f"a1|alice|{digest}|f_test".encode(), hashlib.sha256).digest()[:8]
    assert seeds.submission_seeds(SECRET, "a1", "alice", ANSWERS, ["f_test"]) == {
        "f_test": int.from_bytes(expected, "little")}


@pytest.mark.parametrize("change", [
    dict(assignment="a2"), dict(student="bob"), dict(answers={"f_code": ANSWERS["f_code"] + "# edited\n"}),
    dict(secret=seeds.Secret(b"another", False))])
def test_every_ingredient_changes_the_seed(change: dict) -> None:
    base = dict(secret=SECRET, assignment="a1", student="alice", answers=ANSWERS)
    one = seeds.submission_seeds(**base, tags=["f_test"])  # type: ignore[arg-type]
    two = seeds.submission_seeds(**{**base, **change}, tags=["f_test"])  # type: ignore[arg-type]
    assert one != two


def test_tests_of_one_submission_get_different_seeds() -> None:
    got = seeds.submission_seeds(SECRET, "a1", "alice", ANSWERS, ["f_test", "g_test"])
    assert got["f_test"] != got["g_test"]


def test_without_a_secret_the_public_default_is_used_and_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(checks.SECRET_ENV, raising=False)
    monkeypatch.delenv(checks.SECRET_FILE_ENV, raising=False)
    assert seeds.read_secret() == seeds.Secret(checks.PUBLIC_SECRET.encode(), True)


def test_the_secret_comes_from_the_environment_or_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(checks.SECRET_ENV, "from-env")
    assert seeds.read_secret() == seeds.Secret(b"from-env", False)
    monkeypatch.delenv(checks.SECRET_ENV)
    (tmp_path / "secret").write_text("from-file\n")
    monkeypatch.setenv(checks.SECRET_FILE_ENV, str(tmp_path / "secret"))
    assert seeds.read_secret(tmp_path / "course") == seeds.Secret(b"from-file", False)


def test_a_secret_file_inside_the_course_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(checks.SECRET_ENV, raising=False)
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "secret").write_text("x")
    monkeypatch.setenv(checks.SECRET_FILE_ENV, str(tmp_path / "course" / "secret"))
    with pytest.raises(seeds.SecretError, match="where it would be published"):
        seeds.read_secret(tmp_path / "course")
    monkeypatch.setenv(checks.SECRET_FILE_ENV, str(tmp_path / "missing"))
    with pytest.raises(seeds.SecretError, match="cannot be read"):
        seeds.read_secret(tmp_path / "course")
