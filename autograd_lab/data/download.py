"""Download a data set's four gzip files into the cache with pooch.

pooch does the careful parts: it streams each file to a temporary name beside the target, checks its md5 against
the published one, and only then renames it into place, so an interrupted or corrupt download never leaves a file
that looks complete. It shows a tqdm progress bar when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograd_lab.data.catalog import FILE_NAMES, ROLES, DatasetSpec
from autograd_lab.data.errors import DataError

# pooch's downloader protocol: downloader(url, output_file, pooch_instance) writes the file at url to output_file.
Downloader = Callable[[str, Any, Any], None]


def fetch(spec: DatasetSpec, dest: Path, *, progressbar: bool = True,
             downloader: Downloader | None = None, log: Callable[[str], None] | None = None) -> dict[str, Path]:
    """Fetch the four ``.gz`` files of ``spec`` into ``dest``, trying each mirror in turn.

    Files already in ``dest`` with the right md5 are kept (pooch checks them); a file with the wrong md5 is fetched
    again.

    Args:
        spec: the data set (file md5s and mirror URLs).
        dest: the cache directory for this data set; created if missing.
        progressbar: show a tqdm progress bar per file (stderr).
        downloader: pooch downloader to use instead of HTTP (tests pass one that copies local files).
        log: called with one short line per failed attempt (the full reasons go into the DataError).

    Returns:
        The downloaded files by role (``"train_images"``, ``"train_labels"``, ``"test_images"``,
        ``"test_labels"``).

    Raises:
        DataError: when pooch is not installed, or no mirror delivered a file with the right checksum; the message
            lists each mirror's failure (network error or md5 mismatch).
    """
    try:
        import pooch  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DataError("downloading needs pooch: pip install 'autograd-lab[train]'") from exc
    files: dict[str, Path] = {}
    for role in ROLES:
        fname = FILE_NAMES[role] + ".gz"
        failures = []
        for mirror in spec.mirrors:
            try:
                files[role] = Path(pooch.retrieve(
                    mirror + fname, known_hash="md5:" + spec.md5[role], fname=fname, path=dest,
                    progressbar=progressbar, downloader=downloader,
                ))
                break
            # requests' errors are OSErrors; pooch raises ValueError for an md5 mismatch.
            except (OSError, ValueError) as exc:
                failures.append(f"{mirror + fname}: {exc}")
                if log is not None:
                    log(f"download failed: {mirror + fname} ({type(exc).__name__})")
        else:
            raise DataError(f"{spec.name}: could not download {fname}:\n  " + "\n  ".join(failures))
    return files
