"""What test cells use (autograd_lab/course/checks.py): the default judge's comparison, the form check, and
``hidden_test`` in a notebook, where exercise and judge run in one kernel."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course import checks
from autograd_lab.course.checks import HiddenTestFailed


def inputs(rng: np.random.Generator) -> dict:
    return {"a": rng.normal(size=(2, 3))}


def test_compare_accepts_equal_results_and_floats_within_tolerance() -> None:
    want = {"y": np.array([1.0, 2.0]), "n": 3, "s": "ok", "f": 0.5, "l": [1.0, 2]}
    checks.compare(None, {"y": np.array([1.0, 2.0 + 1e-9]), "n": 3, "s": "ok", "f": 0.5 + 1e-12, "l": [1.0, 2]},
                   want)


@pytest.mark.parametrize("got, text", [
    ({"y": np.array([1.0, 2.1])}, "results['y'] differs from the expected values"),
    ({"y": np.array([1.0, np.nan])}, "results['y'] differs"),
    ({"y": np.array([1.0, np.inf])}, "results['y'] differs"),
])
def test_compare_names_the_first_differing_key(got: dict, text: str) -> None:
    with pytest.raises(HiddenTestFailed, match=text.replace("[", r"\[").replace("]", r"\]")):
        checks.compare(None, got, {"y": np.array([1.0, 2.0])})


def test_float32_gets_looser_default_tolerances_than_float64() -> None:
    want = np.array([1.0], dtype=np.float32)
    checks.compare(None, {"y": want + np.float32(1e-5)}, {"y": want})
    with pytest.raises(HiddenTestFailed):
        checks.compare(None, {"y": np.array([1.0 + 1e-5])}, {"y": np.array([1.0])})


def test_form_difference_names_types_dtypes_and_lengths_never_values_or_shapes() -> None:
    assert checks.form_difference({"y": [1, 2]}, {"y": [1, 2, 3]}) == "results['y'] should be a list of another length"
    assert checks.form_difference(np.zeros(2), np.zeros(3)) == "results should have another shape"
    assert checks.form_difference(np.zeros(2, np.float32), np.zeros(2)) == "results should have dtype float64"
    # a NumPy scalar where a 0-d array is expected: named by dtype, never by shape (hidden inputs decide shapes)
    assert checks.form_difference(np.float64(1), np.zeros(())) == "results should be an array of dtype float64"
    assert checks.form_difference({"y": 1}, {"y": 1}) is None


def test_expect_and_expect_close_fail_with_the_authors_message() -> None:
    with pytest.raises(HiddenTestFailed, match=r"^too small$"):
        checks.expect(False, "too small")
    with pytest.raises(HiddenTestFailed, match=r"^not close$"):
        checks.expect_close(np.array([1.0]), np.array([2.0]), "not close")
    checks.expect_close(np.array([1.0]), np.array([1.0]), "not close")


def test_in_a_notebook_hidden_test_runs_exercise_and_judge_in_one_kernel() -> None:
    seen = []

    def judge(x: dict, got: dict, want: dict) -> None:
        seen.append((got["y"], want["y"]))
        checks.expect(np.all(got["y"] == 2 * x["a"]), "y must be 2a")

    checks.hidden_test("double_test", inputs=inputs, exercise=lambda x: {"y": 2 * x["a"]}, judge=judge,
                       replaces=["autograd_lab.ops.AddOp"])
    assert len(seen) == 1 and np.array_equal(*seen[0])


def test_in_a_notebook_a_failing_judge_raises_assertion_error_with_its_message() -> None:
    with pytest.raises(AssertionError, match="t_test: the judge refused the exercise's own results: bad"):
        checks.hidden_test("t_test", inputs=inputs, exercise=lambda x: {"y": x["a"]},
                           judge=lambda x, got, want: checks.expect(False, "bad"))


def test_in_a_notebook_a_nondeterministic_exercise_is_named() -> None:
    counter = iter(range(10))
    with pytest.raises(AssertionError, match="must be deterministic"):
        checks.hidden_test("t_test", inputs=inputs, exercise=lambda x: {"n": next(counter)})


def test_in_a_notebook_results_must_be_plain_data_and_replaces_must_exist() -> None:
    from autograd_lab.course.grading.exchange import DataError

    with pytest.raises(DataError, match="results\\['y'\\]"):
        checks.hidden_test("t_test", inputs=inputs, exercise=lambda x: {"y": object()})
    with pytest.raises(LookupError, match="no such module, class or function"):
        checks.hidden_test("t_test", inputs=inputs, exercise=lambda x: {}, replaces=["autograd_lab.NoSuchThing"])


def test_grading_seed_depends_on_the_tag_and_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(checks.SECRET_ENV, raising=False)
    monkeypatch.delenv(checks.SECRET_FILE_ENV, raising=False)
    public = checks.grading_seed("a_test")
    assert public != checks.grading_seed("b_test")
    monkeypatch.setenv(checks.SECRET_ENV, "s")
    assert checks.grading_seed("a_test") != public


def test_set_mode_installs_a_mode_and_returns_the_old_one() -> None:
    calls = []

    class Record(checks.Mode):
        def run(self, test: checks.HiddenTest) -> None:
            calls.append(test.tag)

    old = checks.set_mode(Record())
    try:
        checks.hidden_test("m_test", inputs=inputs, exercise=lambda x: {})
    finally:
        assert isinstance(checks.set_mode(old), Record)
    assert calls == ["m_test"]
