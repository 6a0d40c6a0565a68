"""nbgrader configuration for the autograd-lab course; this folder is the course root.

Run nbgrader from this folder (``cd assignments && nbgrader ...``) or through ``autograd-lab course ...``,
which does that for you. Generated folders (release/, submitted/, autograded/, feedback/) and gradebook.db
stay here and are git-ignored; the student release that learners open is copied to ../notebooks/.

Grading: ``autograd-lab course autograde ID [--jobs N]`` does NOT run nbgrader's autograde. It runs each submission
in a bubblewrap sandbox with a kernel-free harness (autograd_lab.course.grading; docs/instructor.md, section 3a)
and writes the verdicts into this course's gradebook, so feedback, export and the formgrader work as usual. Plain
``nbgrader autograde`` would run student code with your rights: do not use it for submissions you do not trust.

- GradingLimits.*: the sandboxed grader's limits per submission (cell and notebook wall clock, CPU, memory,
  processes, file size, scratch disk, output bytes of every MIME type); `--limit NAME=VALUE` overrides one per run.
  See autograd_lab.course.grading.limits.Limits for units and docs/instructor.md for what each does.

Settings that differ from nbgrader's defaults, and why (nbgrader's own validate and autograde use them):
- Execute.timeout: the per-cell timeout (also the sandboxed grader's cell_seconds unless GradingLimits sets it).
  ExecutePreprocessor.timeout is ignored by nbgrader (nbgrader#1463).
- Execute.kernel_name: the kernelspec is named explicitly instead of trusting the submitted notebook's metadata.
- Execute.extra_arguments: the grading kernel gets an address-space limit, because nbgrader has no memory limit
  (nbgrader#1429): a memory hog then fails with MemoryError in its own cell instead of killing the machine.
  3 GiB by default (a kernel with the course imports maps ~0.9 GB); AUTOGRAD_LAB_GRADER_MEMORY_MB overrides it.
- Autograde.sanitize_preprocessors: DeduplicateCellIds replaces DeduplicateIds, whose leftovers crash
  OverwriteCells with KeyError 'grade_id' (nbgrader 0.9.6) when a student duplicates a graded cell.
  RestoreMissingCells puts back deleted setup/test/answer cells from the release before OverwriteCells restores
  edited locked cells (OverwriteCells.add_missing_cells alone cannot restore a read-only setup cell, and raises
  KeyError when a test cell's predecessor is not a graded cell).
- Autograde.autograde_preprocessors: LimitOutputSize caps output bytes per cell (LimitOutput counts lines only),
  so megabytes of printing cannot bloat the gradebook or the feedback.
- GenerateFeedback.preprocessors: ClearHiddenTests strips hidden tests from the feedback HTML (by default nbgrader
  shows them to students); ShortTracebacks cuts tracebacks to their last line, since their context lines would
  quote a failing hidden test. NeutraliseOutputs keeps only plain text and checked PNG images of every output and
  shows markdown answers as literal text, so no HTML, SVG or JavaScript a submission produced runs in feedback.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograd_lab.course.instructor.preprocessors import (
    DeduplicateCellIds,
    LimitOutputSize,
    NeutraliseOutputs,
    RestoreMissingCells,
    ShortTracebacks,
    kernel_memory_limit_argument,
)

c = get_config()  # noqa: F821 (injected by traitlets when it loads this file)

COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = COURSE_ROOT
c.CourseDirectory.course_id = "autograd-lab"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE_ROOT, "gradebook.db")
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".pytest_cache"]

# Release: solutions replaced by a stub that fails loudly, outputs cleared, hidden tests removed.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearOutput.remove_metadata_fields = ["collapsed", "scrolled", "ExecuteTime", "execution"]

# Grading kernel.
c.Execute.kernel_name = "python3"
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True
c.Execute.extra_arguments = [
    "--HistoryManager.hist_file=:memory:",
    "--IPKernelApp.log_level=ERROR",  # no "running over TCP without encryption" warning per notebook
    kernel_memory_limit_argument(int(os.environ.get("AUTOGRAD_LAB_GRADER_MEMORY_MB", "3072")) * 1024**2),
]
# The sandboxed grader (autograd-lab course autograde); units in the names.
c.GradingLimits.cell_seconds = 60
c.GradingLimits.notebook_seconds = 600
c.GradingLimits.cpu_seconds = 300
c.GradingLimits.memory_mb = 3072
c.GradingLimits.processes = 16
c.GradingLimits.file_mb = 16
c.GradingLimits.scratch_mb = 64
c.GradingLimits.output_kb = 2048

c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 100
c.LimitOutputSize.max_bytes = 100_000

c.OverwriteCells.add_missing_cells = True
c.RestoreMissingCells.release_root = os.path.join(COURSE_ROOT, "release")

c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateCellIds,
    OverwriteKernelspec,
    RestoreMissingCells,
    OverwriteCells,
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    LimitOutputSize,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortTracebacks,
    NeutraliseOutputs,
    CSSHTMLHeaderPreprocessor,
]
