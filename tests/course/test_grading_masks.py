"""The sandbox's masks of other autodiff libraries are listed once per state of the site-packages folders: a
package installed between two sandboxes is masked in the second."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lab.course.grading import sandbox


def test_a_package_installed_between_two_sandboxes_is_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    (site / "numpy").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "_site_dirs", lambda: [site])
    cache = tmp_path / "cache"
    assert sandbox.masks(cache) == []
    (site / "torch").mkdir()
    (site / "jax.pth").write_text("")
    assert sandbox.masks(cache) == ["--ro-bind", "/dev/null", str(site / "jax.pth"),
                                    "--ro-bind", str(cache / "masked"), str(site / "torch")]
