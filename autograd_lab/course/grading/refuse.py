"""The one grading path: nbgrader's own autograde (CLI or the formgrader's button) refuses, naming the course's.

nbgrader's ``Autograde`` runs a submission in a kernel with the instructor's rights and reads the grade from that
kernel's outputs, where student code can forge it. The course configuration (``assignments/nbgrader_config.py``)
sets ``Autograde.exporter_class`` to :class:`RefusingExporter`: nbgrader makes its exporter in ``start()``, after
listing the submissions and before it removes, copies or records anything, so it stops there. Its preprocessors are
:class:`RefuseAutograde` as well, in case a command line replaces the exporter.
"""

from __future__ import annotations

from typing import Any

from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import Preprocessor

MESSAGE = ("nbgrader's autograde is switched off for this course: it would run submissions unsandboxed and read "
           "grades from the student's own kernel. Grade with `autograd-lab course autograde ASSIGNMENT --jobs N` "
           "(docs/instructor.md, section 3a)")


class AutogradeRefused(RuntimeError):
    """Raised when nbgrader's own autograde is started; the message names the course's command."""


class RefuseAutograde(Preprocessor):
    """An nbgrader ``Autograde`` preprocessor that always raises :class:`AutogradeRefused`."""

    def preprocess(self, nb: Any, resources: Any) -> Any:
        raise AutogradeRefused(MESSAGE)


class RefusingExporter(NotebookExporter):
    """An exporter that cannot be made: raises :class:`AutogradeRefused` when nbgrader's Autograde creates it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AutogradeRefused(MESSAGE)
