"""The sandbox's library copy (grading/stubs.py): each exercise named by ``replaces=`` is a stub in the source text
itself, the reference's text is nowhere in the copy, and the rest of the library is unchanged."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from importlib.util import cache_from_source
from pathlib import Path

import pytest

from autograd_lab.course.grading import stubs

MODULE = textwrap.dedent('''\
    """A module."""


    def free(x):
        """Doubles x."""
        y = x * 2
        return y


    def one_liner(x): return x + 1


    class Op:
        """An op."""

        scale = 3

        def forward(self, a):
            return a * self.scale

        @staticmethod
        def helper(a):
            """Only a docstring."""


    def untouched(x):
        return -x
    ''')


def test_functions_and_every_method_of_a_class_are_stubbed_in_the_text() -> None:
    out = stubs.stub_source(MODULE, [(["free"], "m.free"), (["one_liner"], "m.one_liner"),
                                                   (["Op"], "m.Op")])
    assert "y = x * 2" not in out and "return x + 1" not in out and "return a * self.scale" not in out
    assert '"""Doubles x."""' in out and "scale = 3" in out  # docstrings and class attributes stay
    assert "return -x" in out
    namespace: dict = {}
    exec(compile(out, "<stubbed>", "exec"), namespace)
    for call, name in ((lambda: namespace["free"](1), "m.free"), (lambda: namespace["one_liner"](1), "m.one_liner"),
                       (lambda: namespace["Op"]().forward(1), "m.Op"), (lambda: namespace["Op"].helper(1), "m.Op")):
        with pytest.raises(NotImplementedError, match=f"^{name} is one of this chapter's exercises: write it "
                                                      f"yourself$"):
            call()
    assert namespace["untouched"](2) == -2


def test_a_method_alone_can_be_stubbed() -> None:
    out = stubs.stub_source(MODULE, [(["Op", "forward"], "m.Op.forward")])
    tree = ast.parse(out)
    op = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert "return a * self.scale" not in out and '"""Only a docstring."""' in out and len(op.body) == 4


@pytest.mark.parametrize("name, error", [("autograd_lab.ops.NoSuchOp", "no such module"),
                                         ("numpy.add", "not a function, method or class|not defined in"),
                                         ("autograd_lab.ops", "not a function, method or class")])
def test_a_name_that_cannot_be_stubbed_is_refused(name: str, error: str, tmp_path: Path) -> None:
    with pytest.raises(stubs.StubError, match=error):
        stubs.stubbed_package([name], tmp_path)


@pytest.mark.slow
def test_the_copy_lacks_the_reference_text_and_the_rest_of_the_library_works(tmp_path: Path) -> None:
    copy = stubs.stubbed_package(["autograd_lab.ops.AddOp", "autograd_lab.Engine.backward"], tmp_path)
    assert copy == stubs.stubbed_package(["autograd_lab.Engine.backward", "autograd_lab.ops.AddOp"], tmp_path)
    arithmetic = (copy / "ops" / "arithmetic.py").read_text()
    assert "return a + b" not in arithmetic and "return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]" \
        not in arithmetic
    assert (stubs.PACKAGE / "ops" / "arithmetic.py").read_text().count("return a + b") == 1  # it was there
    # Every module has unchecked-hash bytecode (flags 0b01); a stubbed module's comes from its stubbed text, the
    # others' from the whole copy, which has no stub.
    whole = stubs.stubbed_package([], tmp_path)
    for library in (copy, whole):
        for source in library.rglob("*.py"):
            compiled = Path(cache_from_source(str(source)))
            assert compiled.read_bytes()[4:8] == b"\x01\x00\x00\x00", compiled
    stubbed_pyc = Path(cache_from_source(str(copy / "ops" / "arithmetic.py"))).read_bytes()
    assert stubs.message("autograd_lab.ops.AddOp").encode() in stubbed_pyc
    assert b"write it yourself" not in Path(cache_from_source(str(whole / "ops" / "arithmetic.py"))).read_bytes()
    assert Path(cache_from_source(str(copy / "nn" / "linear.py"))).read_bytes() == \
        Path(cache_from_source(str(whole / "nn" / "linear.py"))).read_bytes()
    probe = textwrap.dedent('''\
        import numpy as np
        from autograd_lab import Engine, Variable
        from autograd_lab.ops import AddOp, MulOp
        a = Variable.from_numpy(np.ones(2))
        print(MulOp()(a, a).data.tolist())
        for call in (lambda: AddOp()(a, a), lambda: Engine.backward(MulOp()(a, a))):
            try:
                call()
            except NotImplementedError as e:
                print(e)
        ''')
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(copy.parent), "PATH": "/usr/bin:/bin"}).stdout.splitlines()
    assert out == ["[1.0, 1.0]", stubs.message("autograd_lab.ops.AddOp"), stubs.message("autograd_lab.Engine.backward")]


def test_a_function_named_twice_is_stubbed_once():
    """Chapter 07 names ``predict`` by its package and its module path: one definition, one stub (two overlapping
    edits once made the module unparseable)."""
    text = 'def predict(x):\n    """Doc."""\n    return x + 1\n'
    out = stubs.stub_source(text, [(["predict"], "a.predict"), (["predict"], "a.b.predict")])
    ast.parse(out)
    assert out.count("raise NotImplementedError") == 1 and "return x + 1" not in out


@pytest.mark.slow
def test_course_release_builds_the_sandbox_libraries_and_refuses_a_name_it_cannot_stub(tmp_path: Path) -> None:
    """The grader then finds both copies built; a ``replaces=`` typo is found when the chapter is released, before
    students get it, not when it is graded."""
    from autograd_lab.course import instructor

    from .conftest import FIXTURE_SOURCE, copy_course

    course = copy_course(tmp_path / "course", FIXTURE_SOURCE)
    instructor.release(course, tmp_path / "notebooks")
    source = course / "source" / "90_fixture" / "90_fixture.ipynb"
    built = sorted(p.parent.name for p in (course / ".autograd-lab" / "stubs").glob("*/autograd_lab"))
    assert built == sorted(p.parents[0].name for p in stubs.course_libraries(course, source))
    assert len(built) == 2  # the chapter's stubbed copy and the whole one
    source.write_text(source.read_text().replace("autograd_lab.ops.AddOp", "autograd_lab.ops.AddOpp"))
    with pytest.raises(instructor.CourseError, match=r"assignment 90_fixture: .*AddOpp"):
        instructor.release(course, tmp_path / "notebooks-after-the-typo")
    assert not (tmp_path / "notebooks-after-the-typo").exists()  # no student copy was written


def test_the_bytecode_lands_beside_the_copy_whatever_the_graders_pycache_prefix(tmp_path: Path, monkeypatch) -> None:
    """The sandbox's interpreter has a cleared environment, so it looks in ``__pycache__`` beside each module."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    copy = stubs.stubbed_package(["autograd_lab.ops.AddOp"], tmp_path / "cache")
    modules = list(copy.rglob("*.py"))
    assert modules and all(stubs.bytecode_path(m).is_file() for m in modules)
    assert not (tmp_path / "prefix").exists()
