"""Prints the mutation rates of every chapter run (also under pytest-xdist: they travel in the test reports)."""

from __future__ import annotations

_LINES: dict[str, str] = {}


def pytest_runtest_logreport(report) -> None:
    for key, value in getattr(report, "user_properties", []):
        if key == "mutation rates":
            _LINES[report.nodeid] = value


def pytest_terminal_summary(terminalreporter) -> None:
    if _LINES:
        terminalreporter.section("mutation rates")
        for nodeid in sorted(_LINES):
            terminalreporter.write_line(_LINES[nodeid])
