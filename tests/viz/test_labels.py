"""Label text: escaping for Graphviz HTML-like labels, checked against what `dot -Tsvg` actually prints, and value
summaries."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograd_lab import Variable
from autograd_lab.operator import Operator
from autograd_lab.ops import NegOp
from autograd_lab.viz import draw_graph
from autograd_lab.viz.labels import escape_label, summarize

SVG = "{http://www.w3.org/2000/svg}"

# (name given by the user, the text a reader must see in the rendered SVG)
TRICKY = [
    ("a<b", "a<b"),
    ("x>y", "x>y"),
    ("fish & chips", "fish & chips"),
    ('say "hi"', 'say "hi"'),
    ("it's", "it's"),
    ("trailing\\", "trailing\\"),
    ("\\N and \\G are dot escapes", "\\N and \\G are dot escapes"),
    ("<TABLE><TR>", "<TABLE><TR>"),
    ("&amp; is not an entity here", "&amp; is not an entity here"),
    ("ünïcødé ∑ λ 😀", "ünïcødé ∑ λ 😀"),
    ("bell\x07char", "bell\\x07char"),
]


def svg_texts(svg: str) -> list[str]:
    """Every line of text in a rendered SVG, in document order."""
    root = ET.fromstring(svg.encode("utf-8"))
    return [t.text or "" for t in root.iter(f"{SVG}text")]


class TaggedIdentityOp(Operator):
    """Identity with a free-text setting, to put arbitrary text into an operator label."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy]


@pytest.mark.parametrize(("name", "shown"), TRICKY, ids=[repr(n) for n, _ in TRICKY])
def test_tricky_variable_names_render_literally(name, shown):
    x = Variable.from_numpy([1.0], name=name)
    svg = draw_graph(NegOp()(x)).pipe(format="svg", encoding="utf-8")
    assert shown in svg_texts(svg)


def test_name_with_newline_renders_as_two_lines():
    x = Variable.from_numpy([1.0], name="first line\nsecond <line>")
    texts = svg_texts(draw_graph(NegOp()(x)).pipe(format="svg", encoding="utf-8"))
    assert "first line" in texts and "second <line>" in texts


@pytest.mark.parametrize("tag", [name for name, _ in TRICKY], ids=[repr(n) for n, _ in TRICKY])
def test_tricky_operator_settings_render_literally(tag):
    """Settings are shown as ``key=repr(value)``, cut to 30 characters."""
    x = Variable.from_numpy([1.0], name="x")
    svg = draw_graph(TaggedIdentityOp(tag)(x)).pipe(format="svg", encoding="utf-8")
    expected = f"tag={tag!r}" if len(repr(tag)) <= 30 else f"tag={repr(tag)[:29]}…"
    assert expected in svg_texts(svg)


def test_tricky_group_names_render_in_frame_titles():
    x = Variable.from_numpy([1.0], name="x")
    y = NegOp()(x)
    svg = draw_graph(y, group_by=lambda v: "<layer & 1>\\").pipe(format="svg", encoding="utf-8")
    assert "<layer & 1>\\" in svg_texts(svg)


def test_escape_label_produces_markup_without_raw_specials():
    text = escape_label('<a href="x">&\'\\')
    assert text == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;\\\\"


def test_long_text_is_cut_with_an_ellipsis():
    assert escape_label("x" * 100, max_chars=10) == "x" * 9 + "…"


def test_summary_of_small_arrays_lists_the_values():
    assert summarize(np.array(3.0)) == "3"
    assert summarize(np.array([1.0, 2.5, -0.125])) == "[1, 2.5, -0.125]"
    assert summarize(np.array([[1.0, 2.0], [3.0, 4.0]])) == "[[1, 2],\n [3, 4]]"
    assert summarize(np.array([1 / 3])) == "[0.3333]"


def test_summary_of_large_arrays_gives_min_mean_max_and_counts_nan_and_inf():
    assert summarize(np.arange(10.0)) == "min 0  mean 4.5  max 9"
    a = np.array([1.0, 2.0, 3.0, np.nan, np.inf, -np.inf, np.nan])
    assert summarize(a) == "min 1  mean 2  max 3  2 NaN  2 inf"
    assert summarize(np.full(8, np.nan)) == "8 NaN"
