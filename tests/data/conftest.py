"""Keep the data tests off the network and out of the user's real cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_data_env(tmp_path_factory, monkeypatch):
    """Point the cache at an empty temporary directory, turn downloads off by default, and make any real HTTP
    download attempt fail the test: tests that exercise downloading pass their own local-file downloader."""
    monkeypatch.setenv("AUTOGRAD_LAB_DATA", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("AUTOGRAD_LAB_OFFLINE", "1")
    try:
        import pooch.core
    except ImportError:  # without pooch nothing can download anyway
        return

    def no_network(url, progressbar=False):
        raise AssertionError(f"a test tried to download {url}")

    monkeypatch.setattr(pooch.core, "choose_downloader", no_network)
