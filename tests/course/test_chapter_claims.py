"""The chapters say only what their notebooks show.

1. Every number a chapter's prose states about its own outputs is tied to a line that a code cell prints. A
   :class:`Claim` names the phrase of the prose (a regular expression over the chapter's markdown, group 1 the
   stated value) and the printed line (a regular expression over the executed notebook's text output, group 1 the
   printed value), and the tolerance, in the printed units, within which the two must agree. A :class:`Relation`
   does the same for a comparison the prose states ("the held-out loss goes up while the accuracy goes up").
   The test executes each chapter's source notebook with nbclient and checks every claim. When the prose is
   reworded the claim fails too, so the table below stays the list of the numbers the chapters state.
   Timings are never claimed as numbers: the timing cells print theirs, and the prose says what varies.
2. An unattempted challenge leaves "Run All" green: with the challenge's solution regions replaced by
   ``raise NotImplementedError()`` (as nbgrader's release does) and every graded answer in place, the notebook runs
   without an error and the challenge's test cell prints "not attempted".
3. Every chapter states its time as a range and calls it an estimate (no learner has been timed on this edition).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .conftest import COURSE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("chapter_claims")]

CHAPTERS = sorted(p.name for p in (COURSE / "source").iterdir() if p.is_dir())
WORDS = {"none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10}


@dataclass(frozen=True)
class Claim:
    """A value the prose states (group 1 of ``prose``, or ``stated`` when the phrase holds no number) that the
    notebook prints (group 1 of ``output``; with ``count=True`` the number of matches of ``output``)."""

    chapter: str
    prose: str
    output: str
    tolerance: float = 0.0
    stated: float | str | None = None
    count: bool = False


@dataclass(frozen=True)
class Relation:
    """A comparison the prose states (``prose`` must match) that ``holds`` checks on the printed output."""

    chapter: str
    prose: str
    holds: Callable[[str], bool]


def _floats(pattern: str, text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in re.findall(pattern, text, re.M)]


def _loss_and_accuracy_rise_from_5_to_6(out: str) -> bool:
    loss = _floats(r"held-out loss ([\d.]+) acc", out)
    acc = _floats(r"held-out loss [\d.]+ acc ([\d.]+)%", out)
    return len(loss) == len(acc) == 6 and loss[5] > loss[4] and acc[5] > acc[4]


def _lstm_ends_higher(out: str) -> bool:
    rnn = _floats(r"rnn: [\d,]+ parameters, held-out accuracy ([\d.]+)%", out)
    lstm = _floats(r"lstm: [\d,]+ parameters, held-out accuracy ([\d.]+)%", out)
    return len(rnn) == len(lstm) == 1 and lstm[0] > rnn[0]


def _four_times_the_recurrent_parameters(out: str) -> bool:
    # SequenceClassifier(input 28, hidden 32) + Linear(32, 10): the recurrent part is the total minus 330.
    rnn = _floats(r"rnn: ([\d,]+) parameters", out)
    lstm = _floats(r"lstm: ([\d,]+) parameters", out)
    return len(rnn) == len(lstm) == 1 and lstm[0] - 330 == 4 * (rnn[0] - 330)


def _cnn_has_about_eleven_times_the_macs(out: str) -> bool:
    mlp = _floats(r"^MLP 784-32-10 float32 +[\d,]+ +[\d,]+ +([\d,]+)", out)
    cnn = _floats(r"^CNN 8-16 float32 +[\d,]+ +[\d,]+ +([\d,]+)", out)
    return len(mlp) == len(cnn) == 1 and round(cnn[0] / mlp[0]) == 11


def _int8_within_noise(out: str) -> bool:
    # "within noise": at most half a point on 2,000 held-out digits (one standard error is about 0.6 points there)
    pairs = re.findall(r"float32 accuracy ([\d.]+)%, int8 accuracy ([\d.]+)%", out)
    return len(pairs) == 2 and all(abs(float(f) - float(q)) <= 0.5 for f, q in pairs)


CLAIMS = [
    # 04: the finite-difference table and the plot's float32 error at h = 1e-6
    Claim("04_gradient_checking", r"\| float64 \|[^|\n]*\|[^|\n]*\| \$5\.2\\times10\^\{-6\}\$ \|",
          r"^central, float64: smallest error [\d.e+-]+ at h = ([\d.e+-]+)$", 0.05e-6, stated=5.2e-6),
    Claim("04_gradient_checking", r"\| float64 \|[^|\n]*\|[^|\n]*\|[^|\n]*\| \$2\.5\\times10\^\{-12\}\$ \|",
          r"^central, float64: smallest error ([\d.e+-]+) at", 0.05e-12, stated=2.5e-12),
    Claim("04_gradient_checking", r"\| float32 \|[^|\n]*\|[^|\n]*\| \$1\.4\\times10\^\{-3\}\$ \|",
          r"^central, float32: smallest error [\d.e+-]+ at h = ([\d.e+-]+)$", 0.05e-3, stated=1.4e-3),
    Claim("04_gradient_checking", r"\| float32 \|[^|\n]*\|[^|\n]*\|[^|\n]*\| \$1\.6\\times10\^\{-6\}\$ \|",
          r"^central, float32: smallest error ([\d.e+-]+) at", 0.05e-6, stated=1.6e-6),
    Claim("04_gradient_checking", r"at \$h = 10\^\{-6\}\$, a natural choice in `float64`, it is off\s+by about "
          r"\$4\\times10\^\{-3\}\$", r"^central, float32 at h = 1e-6: error ([\d.e+-]+)$", 0.5e-3, stated=4e-3),
    # 05: the linear layer's answer box
    Claim("05_tensors", r"every entry is \$4/12 = 1/3\$", r"b\.grad: \[([\d.]+)", 1e-4, stated=1 / 3),
    Claim("05_tensors", r"`W\.grad` has `W`'s stored shape `(\(3, 2\))`", r"W\.grad shape: (\(3, 2\))"),
    # 07: the MLP
    Claim("07_training_an_mlp", r"784 → 128 → 10, about ([\d,]+) parameters", r"parameters: (\d+)", 2000),
    Claim("07_training_an_mlp", r"six epochs of plain SGD reach about (\d+)% on held-out digits",
          r"held-out accuracy: ([\d.]+)% on", 0.5),
    # 08: the summed loss
    Claim("08_regularisation_and_optimizers", r"after 20 steps the run is back at about ([\d.]+)",
          r"^summed loss +median .* last loss/example ([\d.]+)", 0.1),
    Claim("08_regularisation_and_optimizers", r"clipping stays around (\d+)",
          r"^summed loss, clipped at 5 +median norm +([\d.]+)", 15),
    Claim("08_regularisation_and_optimizers", r"the mean loss's gradient has a norm of about ([\d.]+)",
          r"^mean loss \(the fix\) +median norm +([\d.]+)", 0.15),
    # 09: the CNN
    Claim("09_convolution", r"It has ([\d,]+) parameters", r"^([\d,]+) parameters$"),
    Claim("09_convolution", r"at 0\.02 it prints (none)", r"dead channels in block 2 \(zero on all 500 test images\): "
          r"(\d+) of 16"),
    Claim("09_convolution", r"each of the (\d+) maps is a coarse 7x7", r"maps that are all zero for this digit: "
          r"\d+ of (\d+)"),
    # 10: recurrent networks
    Claim("10_recurrent", r"So the graph has (\d+) nodes", r"the graph has (\d+) nodes"),
    Claim("10_recurrent", r"every frame holds the same (\w+) operators", r"operators per step: (\d+), \1, \1$"),
    Claim("10_recurrent", r"a factor of about ([\d.]+) per step", r"^ +LSTM: step 1 gets .* a factor ([\d.]+) lost",
          0.05),
    Claim("10_recurrent", r"against ([\d.]+) for the RNN", r"^ *tanh RNN: step 1 gets .* a factor ([\d.]+) lost",
          0.05),
    Claim("10_recurrent", r"\((\d+) operators per step for your cell", r"your lstm_cell (\d+),"),
    Claim("10_recurrent", r"against (\d+) for the fused step", r"the library's fused step (\d+)"),
    Claim("10_recurrent", r"compounds into about (\w+) orders of magnitude",
          r"([\d.]+) orders of magnitude more gradient reaches step 1", 0.5),
    # 11: define-and-run
    Claim("11_define_and_run", r"there the difference printed is (\d+)",
          r"largest weight difference eager vs replay: ([\d.e+-]+)"),
    Claim("11_define_and_run", r"the first (\w+) calls with a shape both capture", r"captures: (\d+)"),
    Claim("11_define_and_run", r"so the\s+(\w+) steps print as", r"^node\d+ \(1, \d+\) float32 = ", count=True),
    Claim("11_define_and_run", r"steps print as (\w+) calls", r"^\s+al_dense_f32\(", count=True),
    # 12: deployment
    Claim("12_to_the_microcontroller", r"cuts flash by almost (\d+)×", r"\(([\d.]+)x smaller\)", 0.15),
]

def _clipped_ends_below_the_fix_and_lr_03_at_least_as_well(out: str) -> bool:
    last = dict(re.findall(r"^(summed loss, clipped at 5|mean loss \(the fix\)|mean loss, lr 0\.3) +median .* "
                           r"last loss/example ([\d.]+)", out, re.M))
    return len(last) == 3 and float(last["summed loss, clipped at 5"]) < float(last["mean loss (the fix)"]) and \
        float(last["mean loss, lr 0.3"]) <= float(last["summed loss, clipped at 5"]) + 0.05


def _summed_loss_reaches_the_thousands(out: str) -> bool:
    peak = _floats(r"^summed loss +median norm +[\d.e+]+ +peak loss/example +([\d.e+]+)", out)
    return len(peak) == 1 and 1000 <= peak[0] < 10000


RELATIONS = [
    Relation("08_regularisation_and_optimizers", r"the loss\s+per example reaches the thousands",
             _summed_loss_reaches_the_thousands),
    Relation("08_regularisation_and_optimizers", r"orange ends \*lower\* than the green(.|\n)*does at least\s+as well",
             _clipped_ends_below_the_fix_and_lr_03_at_least_as_well),
    Relation("12_to_the_microcontroller", r"about eleven\s+times more multiply-accumulates",
             _cnn_has_about_eleven_times_the_macs),
    Relation("12_to_the_microcontroller", r"Both int8 scores\s+sit within noise of their float ones",
             _int8_within_noise),
    Relation("07_training_an_mlp",
             r"held-out loss goes \*\*up\*\* from epoch 5 to epoch 6 while the held-out accuracy\s+"
             r"also goes \*\*up\*\*",
             _loss_and_accuracy_rise_from_5_to_6),
    Relation("10_recurrent", r"The LSTM learns faster and ends higher", _lstm_ends_higher),
    Relation("10_recurrent", r"with four times the recurrent parameters", _four_times_the_recurrent_parameters),
]


def _path(chapter: str) -> Path:
    return COURSE / "source" / chapter / f"{chapter}.ipynb"


def _execute(nb: nbformat.NotebookNode, where: Path) -> nbformat.NotebookNode:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # the kernel inherits it: one BLAS thread, as the notebooks' setup asks
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(where)}}).execute()
    return nb


def _printed(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            elif out.get("output_type") in ("execute_result", "display_data"):
                parts.append(out.get("data", {}).get("text/plain", ""))
        parts.append("\n")
    return "".join(parts)


def _markdown(chapter: str) -> str:
    nb = nbformat.read(_path(chapter), as_version=4)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


_EXECUTED: dict[str, str] = {}


def printed_output(chapter: str) -> str:
    """The text a fresh run of the chapter's source notebook prints (executed once per test session)."""
    if chapter not in _EXECUTED:
        nb = nbformat.read(_path(chapter), as_version=4)
        _EXECUTED[chapter] = _printed(_execute(nb, _path(chapter).parent))
    return _EXECUTED[chapter]


def _value(text: str) -> float | str:
    text = text.strip()
    if text.lower() in WORDS:
        return float(WORDS[text.lower()])
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def _ids(items: list[Claim] | list[Relation]) -> list[str]:
    return [f"{c.chapter[:2]}-{re.sub(r'[^a-z0-9]+', '_', c.prose.lower())[:40].strip('_')}" for c in items]


@pytest.mark.parametrize("claim", CLAIMS, ids=_ids(CLAIMS))
def test_claim(claim: Claim) -> None:
    said = re.search(claim.prose, _markdown(claim.chapter))
    assert said, f"{claim.chapter}: the prose no longer says /{claim.prose}/; update the claim with the text"
    stated = _value(said.group(1)) if claim.stated is None and said.groups() else claim.stated
    out = printed_output(claim.chapter)
    if claim.count:
        printed: float | str = float(len(re.findall(claim.output, out, re.M)))
    else:
        match = re.search(claim.output, out, re.M)
        assert match, f"{claim.chapter}: nothing printed matches /{claim.output}/ (the prose says {stated!r})"
        printed = _value(match.group(1))
    if isinstance(stated, float) and isinstance(printed, float):
        assert abs(stated - printed) <= claim.tolerance, (
            f"{claim.chapter}: the prose says {stated:g} ({said.group(0)!r}), the notebook prints {printed:g} "
            f"(tolerance {claim.tolerance:g})")
    else:
        assert stated == printed, f"{claim.chapter}: the prose says {stated!r}, the notebook prints {printed!r}"


@pytest.mark.parametrize("relation", RELATIONS, ids=_ids(RELATIONS))
def test_relation(relation: Relation) -> None:
    assert re.search(relation.prose, _markdown(relation.chapter)), (
        f"{relation.chapter}: the prose no longer says /{relation.prose}/; update the relation with the text")
    assert relation.holds(printed_output(relation.chapter)), (
        f"{relation.chapter}: the prose says /{relation.prose}/, but the printed output does not show it")


def without_challenge_solutions(nb: nbformat.NotebookNode) -> list[int]:
    """Replace every challenge answer's solution regions with ``raise NotImplementedError()``, as the release does;
    return the indices of the challenge test cells."""
    tests = []
    for i, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("_challenge_test"):
            tests.append(i)
        if not grade_id.endswith("_challenge_code"):
            continue
        lines, out, inside = cell.source.split("\n"), [], False
        for line in lines:
            if line.strip() == "### BEGIN SOLUTION":
                indent = line[: len(line) - len(line.lstrip())]
                out += [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
                inside = True
            elif line.strip() == "### END SOLUTION":
                inside = False
            elif not inside:
                out.append(line)
        cell.source = "\n".join(out)
    return tests


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_an_unattempted_challenge_leaves_run_all_green(chapter: str) -> None:
    nb = nbformat.read(_path(chapter), as_version=4)
    tests = without_challenge_solutions(nb)
    if not tests:
        pytest.skip(f"{chapter} has no challenge")
    _execute(nb, _path(chapter).parent)  # raises CellExecutionError, naming the cell, if any cell fails
    for i in tests:
        text = _printed(nbformat.from_dict({"cells": [nb.cells[i]]}))
        assert "not attempted" in text, f"{chapter}: challenge test cell {i} printed {text[:300]!r}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_states_its_time_as_an_estimated_range(chapter: str) -> None:
    intro = nbformat.read(_path(chapter), as_version=4).cells[0].source
    time = re.search(r"\*\*Time\.\*\* An estimate, not yet timed with learners[^:]*: (\d+|1½) to (\d+) (minutes|hours)",
                     intro)
    assert time, f"{chapter}: the first cell should state the time as '**Time.** An estimate, ...: N to M minutes'"
