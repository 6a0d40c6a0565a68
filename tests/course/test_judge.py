"""The judge's verdicts (grading/judge.py): the student's bytes against the reference's results, with only fixed
texts or the judge's own message shown; the judge process on the fixture's source notebook."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course import checks
from autograd_lab.course.grading import assemble, exchange, judge

from .conftest import FIXTURE_SOURCE

SOURCE = FIXTURE_SOURCE / "90_fixture" / "90_fixture.ipynb"


def inputs(rng: np.random.Generator) -> dict:
    return {"a": rng.normal(size=(2, 3))}


def exercise(x: dict) -> dict:
    return {"y": x["a"] * 2, "n": 3}


def make(judge_fn: object = None) -> checks.HiddenTest:
    return checks.HiddenTest("t", inputs, exercise, judge_fn)  # type: ignore[arg-type]


def want(seed: int = 5) -> object:
    test = make()
    return exchange.decode(exchange.encode(test.exercise(test.draw(seed))))


def verdict(got: object, judge_fn: object = None, seed: int = 5) -> tuple[bool, str]:
    data = got if isinstance(got, bytes) or got is None else exchange.encode(got)
    return judge.decide(make(judge_fn), seed, data, want(seed))


def test_the_reference_results_pass() -> None:
    assert verdict(want()) == (True, "")


def test_no_data_fails_with_the_fixed_no_result_text() -> None:
    assert verdict(None) == (False, checks.NO_RESULT)


@pytest.mark.parametrize("data", [b"", b"garbage", b'{"tree": {"y": NaN}, "blobs": []}\n'])
def test_unreadable_data_fails_with_the_fixed_not_plain_text(data: bytes) -> None:
    assert verdict(data) == (False, checks.NOT_PLAIN)


def test_wrong_values_fail_naming_the_key_only() -> None:
    got = want()
    got["y"] = got["y"] + 1e-3  # type: ignore[index]
    assert verdict(got) == (False, f"{checks.FAILED}: results['y'] differs from the expected values")


@pytest.mark.parametrize("change, text", [
    (lambda g: g.update(y=g["y"].astype(np.float32)), "results['y'] should have dtype float64"),
    (lambda g: g.update(y=g["y"][:1]), "results['y'] should have another shape"),
    (lambda g: g.update(n=3.0), "results['n'] should be an int"),
    (lambda g: g.pop("n"), "results should have the keys ['n', 'y'], missing ['n']"),
])
def test_a_wrong_form_fails_with_the_wrong_form_text(change: object, text: str) -> None:
    got = want()
    change(got)  # type: ignore[operator]
    assert verdict(got) == (False, f"{checks.WRONG_FORM}: {text}.")


def test_extra_keys_are_refused_without_naming_them() -> None:
    """A student's own keys could spell out hidden values: the message names only the expected keys."""
    got = want()
    got["0.123456"] = 1  # type: ignore[index]
    ok, message = verdict(got)
    assert not ok and "0.123456" not in message and message.endswith("and no others.")


def test_nan_where_the_reference_has_a_number_fails() -> None:
    got = want()
    got["y"][0, 0] = np.nan  # type: ignore[index]
    assert verdict(got)[0] is False


def test_nan_must_stand_where_the_reference_has_nan_and_infinities_must_match() -> None:
    values = np.array([np.nan, np.inf, 1.0])
    assert checks._first_difference(values.copy(), values, "r", None, None) is None
    assert checks._first_difference(np.array([0.0, np.inf, 1.0]), values, "r", None, None) is not None
    assert checks._first_difference(np.array([np.nan, -np.inf, 1.0]), values, "r", None, None) is not None


def test_a_judge_function_decides_with_its_own_message() -> None:
    def positive(x: dict, got: dict, want: dict) -> None:
        checks.expect(got["n"] > 5, "n must be more than 5")

    assert verdict(want(), positive) == (False, f"{checks.FAILED}: n must be more than 5")


def test_a_judge_broken_by_the_students_data_fails_with_a_fixed_text() -> None:
    def fragile(x: dict, got: dict, want: dict) -> None:
        raise KeyError(str(x["a"]))  # a message with hidden values, never shown

    assert verdict(want(), fragile) == (False, checks.UNCHECKABLE)


def test_the_judge_draws_its_own_inputs() -> None:
    """decide() gets x drawn again from the seed, so an exercise that changed x in place cannot mislead it."""
    seen = []
    assert verdict(want(), lambda x, got, w: seen.append(x["a"].copy()))[0]
    assert np.array_equal(seen[0], inputs(np.random.default_rng(5))["a"])


@pytest.mark.slow
def test_the_judge_process_decides_from_the_source_notebook_and_stops_on_the_references_failure() -> None:
    cells = assemble.judge_cells(SOURCE)
    process = judge.Judge(cells, 20.0)
    try:
        tags = ["add_op_forward_test", "add_op_backward_test", "sum_of_squares_test"]
        seeds = {tag: 11 for tag in tags}
        rng = np.random.default_rng(11)  # as the fixture's inputs() draws them
        right = exchange.encode({"s": float(np.sum(np.square(rng.normal(size=(int(rng.integers(2, 6)),)))))})
        verdicts = process.decide(seeds, {"add_op_forward_test": None, "add_op_backward_test": b"junk",
                                          "sum_of_squares_test": right})
        assert verdicts == {"add_op_forward_test": judge.Verdict(False, checks.NO_RESULT),
                            "add_op_backward_test": judge.Verdict(False, checks.NOT_PLAIN),
                            "sum_of_squares_test": judge.Verdict(True, "")}
        # a second submission gets a fresh fork: nothing the first left behind changes the verdicts
        assert process.decide(seeds, {tag: None for tag in tags})["sum_of_squares_test"].passed is False
    finally:
        process.close()
    broken = [dict(c) for c in cells]
    for cell in broken:
        if cell["grade_id"] == "sum_of_squares_code":
            cell["source"] = "def sum_of_squares(x):\n    raise RuntimeError('reference bug')\n"
    process = judge.Judge(broken, 20.0)
    try:
        with pytest.raises(checks.GraderError, match="sum_of_squares_test: the exercise failed on the solution "
                                                     r"\(RuntimeError: reference bug\)"):
            process.decide(seeds, {tag: None for tag in tags})
    finally:
        process.close()


@pytest.mark.slow
def test_a_reference_that_fails_stops_the_batch_before_any_student_is_graded(tmp_path) -> None:
    import nbformat

    from autograd_lab.course import instructor

    source = nbformat.read(SOURCE, as_version=4)
    for cell in source.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sum_of_squares_code":
            cell.source = "def sum_of_squares(x):\n    raise RuntimeError('reference bug')\n"
    path = tmp_path / "course" / "source" / "90_fixture" / "90_fixture.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(source, path)
    (tmp_path / "course" / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    with pytest.raises(instructor.CourseError, match=r"sum_of_squares_test: the exercise failed on the solution "
                                                     r"\(RuntimeError: reference bug\)"):
        instructor.autograde(tmp_path / "course", "90_fixture", unsafe=True)


@pytest.mark.slow
def test_judges_lend_one_judge_per_decision_and_a_source_that_fails_fails_every_decision() -> None:
    """Judges start without waiting; threads deciding at once get the verdicts one judge gives in sequence; a source
    cell that raises is an authoring error on the first decision and on every later one (never a verdict)."""
    from concurrent.futures import ThreadPoolExecutor

    cells = assemble.judge_cells(SOURCE)
    tags = [c["grade_id"] for c in cells if c["kind"] == "test"]
    requests = [({tag: seed for tag in tags}, dict.fromkeys(tags)) for seed in range(4)]
    one = judge.Judge(cells, 20.0)
    try:
        expected = [one.decide(*request) for request in requests]
    finally:
        one.close()
    pool = judge.Judges(cells, 20.0, 2)
    try:
        with ThreadPoolExecutor(max_workers=4) as threads:
            assert list(threads.map(lambda request: pool.decide(*request), requests)) == expected
    finally:
        pool.close()
    broken = [dict(c, source="raise ValueError('setup bug')") if c["kind"] == "helper" else c for c in cells]
    assert any(c["kind"] == "helper" for c in cells)
    pool = judge.Judges(broken, 20.0, 1)
    try:
        for _ in range(2):
            with pytest.raises(checks.GraderError, match=r"the source notebook fails in the judge: .*ValueError: "
                                                         r"setup bug"):
                pool.decide(*requests[0])
    finally:
        pool.close()


@pytest.mark.slow
def test_a_reference_that_fails_writes_nothing_though_sandboxes_ran_beside_its_check(tmp_path) -> None:
    """With 2 jobs the authoring check overlaps the first sandbox runs; its failure still stops the batch before a
    grade or an autograded notebook is written. The reference fails on seed 0's inputs only, so the students' own
    seeds pass: only the order of the check and the writes keeps this batch from recording grades."""
    import nbformat
    from nbgrader.api import Gradebook

    from autograd_lab.course import instructor

    from .conftest import copy_course
    from .submissions import full_solution

    course = copy_course(tmp_path / "course", FIXTURE_SOURCE)
    instructor.release(course, tmp_path / "notebooks")
    release = nbformat.read(course / "release" / "90_fixture" / "90_fixture.ipynb", as_version=4)
    source = nbformat.read(SOURCE, as_version=4)
    for name in ("ada", "bob", "cy"):
        path = course / "submitted" / name / "90_fixture" / "90_fixture.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(full_solution(release, source), path)
    seed0 = np.random.default_rng(0)  # as the fixture's inputs() draws them
    seed0_x = seed0.normal(size=(int(seed0.integers(2, 6)),)).tolist()
    for cell in source.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sum_of_squares_code":
            cell.source = (f"def sum_of_squares(x):\n    if x.tolist() == {seed0_x!r}:\n"
                           f"        raise RuntimeError('reference bug on seed 0')\n"
                           f"    return float(np.sum(np.square(x)))\n")
    nbformat.write(source, course / "source" / "90_fixture" / "90_fixture.ipynb")
    with pytest.raises(instructor.CourseError, match=r"sum_of_squares_test: the exercise failed on the solution "
                                                     r"\(RuntimeError: reference bug on seed 0\)"):
        instructor.autograde(course, "90_fixture", jobs=2)
    assert not (course / "autograded").exists()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.assignment_submissions("90_fixture") == []


@pytest.mark.slow
def test_an_interrupted_batch_does_not_wait_for_a_judge_stuck_in_a_looping_source_cell(tmp_path, monkeypatch) -> None:
    """The authoring check runs in a pool thread; when the batch stops (Ctrl-C while the gradebook opens, here), the
    judges are killed before the pool is shut down, so a source cell that never ends cannot hold the grader."""
    import threading

    import nbformat

    from autograd_lab.course import instructor
    from autograd_lab.course.grading import batch, record

    from .conftest import copy_course

    course = copy_course(tmp_path / "course", FIXTURE_SOURCE)
    instructor.release(course, tmp_path / "notebooks")
    source = nbformat.read(SOURCE, as_version=4)
    for cell in source.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sum_of_squares_code":
            cell.source = "while True:\n    pass\n"
    nbformat.write(source, course / "source" / "90_fixture" / "90_fixture.ipynb")

    def interrupted(course_dir):
        raise KeyboardInterrupt

    monkeypatch.setattr(record, "open_gradebook", interrupted)
    raised: list[BaseException] = []

    def grade() -> None:
        try:
            batch.grade_batch(course, "90_fixture", [], jobs=1, unsafe=True)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=grade, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the batch still waits for the judge 60 s after the interrupt"
    assert len(raised) == 1 and isinstance(raised[0], KeyboardInterrupt)


def test_judges_kill_ends_a_decision_blocked_on_a_looping_source_cell() -> None:
    import threading

    cells = [{"index": 0, "kind": "helper", "grade_id": "loop", "source": "while True:\n    pass\n"},
             {"index": 1, "kind": "test", "grade_id": "t", "source": "pass\n"}]
    pool = judge.Judges(cells, 5.0, 1)
    errors: list[BaseException] = []

    def decide() -> None:
        try:
            pool.decide({"t": 0}, {"t": None})
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    thread.join(timeout=1.0)
    assert thread.is_alive()  # still waiting for the judge's namespace
    pool.kill()
    thread.join(timeout=30)
    pool.close()
    assert not thread.is_alive() and len(errors) == 1 and isinstance(errors[0], checks.GraderError)


def test_a_batch_never_runs_more_sandboxes_than_jobs_and_writes_what_one_job_writes(tmp_path, monkeypatch) -> None:
    """Each worker starts its next sandbox while the judge decides its last submission: the judge's work overlaps
    the sandboxes, but no more than ``jobs`` sandboxes run at once, and the gradebook gets what a 1-job batch
    writes."""
    import threading

    import nbformat

    from autograd_lab.course import instructor
    from autograd_lab.course.grading import batch, sandbox

    from .conftest import copy_course
    from .submissions import full_solution

    course = copy_course(tmp_path / "course", FIXTURE_SOURCE)
    instructor.release(course, tmp_path / "notebooks")
    release = nbformat.read(course / "release" / "90_fixture" / "90_fixture.ipynb", as_version=4)
    source = nbformat.read(SOURCE, as_version=4)
    students = [f"s{k}" for k in range(6)]
    for k, name in enumerate(students):
        path = course / "submitted" / name / "90_fixture" / "90_fixture.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(full_solution(release, source) if k % 2 == 0 else release, path)
    running, most, lock = [0], [0], threading.Lock()
    run = sandbox._run

    def counted(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return run(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(sandbox, "_run", counted)
    monkeypatch.setattr(batch.os, "cpu_count", lambda: 8)  # 3 jobs even on a 2-core machine
    three = [(o.student, score, top, o.messages)
             for o, score, top in batch.grade_batch(course, "90_fixture", students, jobs=3, unsafe=True)]
    assert most[0] == 3
    most[0] = 0
    one = [(o.student, score, top, o.messages)
           for o, score, top in batch.grade_batch(course, "90_fixture", students, jobs=1, unsafe=True)]
    assert most[0] == 1
    assert three == one
    assert [score == top for _, score, top, _ in one] == [True, False] * 3
