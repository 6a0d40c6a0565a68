"""Deferred imports in the exercise process (autograd_lab.course.grading.lazy): same modules, code run on first use,
packages before their submodules."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograd_lab.course.grading import lazy


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    """A package ``lazypkg`` (modules ``plots`` and ``patches``) that records when each module's code runs, with
    ``lazypkg`` and ``lazypkg.plots`` deferred."""
    root = tmp_path / "lazypkg"
    root.mkdir()
    (tmp_path / "lazyorder.py").write_text("ORDER = []\n")  # each module below appends its name when it runs
    record = "import lazyorder\nlazyorder.ORDER.append(__name__)\n"
    (root / "__init__.py").write_text(record + "VALUE = 42\n")
    (root / "plots.py").write_text(record + "import lazypkg\nSEEN = lazypkg.VALUE\n")
    (root / "patches.py").write_text(record + "from lazypkg import VALUE\n")
    sys.path.insert(0, str(tmp_path))
    finder = lazy.LazyFinder(["lazypkg", "lazypkg.plots"])
    sys.meta_path.insert(0, finder)
    try:
        yield "lazypkg"
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m in ("lazypkg", "lazyorder") or m.startswith("lazypkg.")]:
            del sys.modules[name]


def order() -> list[str]:
    import lazyorder

    return lazyorder.ORDER


def test_import_binds_the_modules_without_running_them(package: str) -> None:
    import lazypkg.plots as plots

    assert order() == []
    assert lazy.loaded("lazypkg") is None and lazy.loaded("lazypkg.plots") is None
    assert plots is sys.modules["lazypkg.plots"]


def test_first_use_runs_the_package_then_the_module(package: str) -> None:
    import lazypkg.plots as plots

    assert plots.SEEN == 42
    assert order() == ["lazypkg", "lazypkg.plots"]
    assert lazy.loaded("lazypkg") is sys.modules["lazypkg"] and lazy.loaded("lazypkg.plots") is plots


def test_dir_shows_the_module_as_it_is_once_run(package: str) -> None:
    import lazypkg

    assert "VALUE" in dir(lazypkg)
    assert order() == ["lazypkg"]


def test_a_submodule_that_is_not_deferred_runs_after_its_package(package: str) -> None:
    from lazypkg.patches import VALUE

    assert VALUE == 42
    assert order() == ["lazypkg", "lazypkg.patches"]


def test_modules_not_named_are_left_alone() -> None:
    finder = lazy.LazyFinder(["lazypkg"])
    assert finder.find_spec("json", None) is None
