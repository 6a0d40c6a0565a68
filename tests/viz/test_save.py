"""GraphView.save_as: one picture file whose format is the suffix's, PNG rendered by Graphviz itself (issue 14)."""

from __future__ import annotations

import pytest

from autograd_lab.viz import DotNotFoundError, draw_graph

from .helpers import build_mlp

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) in pixels from a PNG's IHDR chunk (PNG specification, section 11.2.2)."""
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_png_svg_pdf_and_dot_are_chosen_by_the_suffix(tmp_path):
    g = draw_graph(build_mlp().loss)
    written = {suffix: g.save_as(tmp_path / f"graph.{suffix}") for suffix in ("png", "svg", "pdf", "dot", "gv")}
    assert written["png"].read_bytes()[:8] == PNG_SIGNATURE
    assert "</svg>" in written["svg"].read_text(encoding="utf-8")
    assert written["pdf"].read_bytes()[:5] == b"%PDF-"
    assert written["dot"].read_text(encoding="utf-8") == g.source == written["gv"].read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"graph.{s}" for s in written)  # nothing else


def test_png_resolution_follows_dpi_and_the_view_is_unchanged(tmp_path):
    g = draw_graph(build_mlp().loss)
    source = g.source
    low = png_size(g.save_as(tmp_path / "low.png", dpi=72).read_bytes())
    high = png_size(g.save_as(tmp_path / "high.PNG", dpi=144).read_bytes())
    assert high[0] == pytest.approx(2 * low[0], rel=0.05) and high[1] == pytest.approx(2 * low[1], rel=0.05)
    assert g.source == source  # the dpi went into a copy


def test_unknown_suffix_lists_the_supported_ones(tmp_path):
    with pytest.raises(ValueError, match=r"'graph\.jpeg'.*\.png, \.svg, \.pdf, \.dot, \.gv"):
        draw_graph(build_mlp().loss).save_as(tmp_path / "graph.jpeg")


def test_dot_text_needs_no_graphviz_program_but_png_says_how_to_install_it(tmp_path, monkeypatch):
    g = draw_graph(build_mlp().loss)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no `dot`
    assert g.save_as(tmp_path / "graph.dot").read_text(encoding="utf-8") == g.source
    with pytest.raises(DotNotFoundError, match="apt-get install graphviz"):
        g.save_as(tmp_path / "graph.png")
