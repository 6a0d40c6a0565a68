"""The one exception the data package raises for bad or missing data."""

from __future__ import annotations


class DataError(ValueError):
    """A data file is corrupt, truncated or missing, or no source could provide a data set.

    The message names the file (or the sources tried) and what was wrong: magic number, dtype code, dimensions,
    size, gzip stream or checksum.
    """
