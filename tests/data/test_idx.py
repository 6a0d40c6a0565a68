"""IDX reader and writer: the byte layout of the MNIST page, round trips, and one named error per corruption."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from autograd_lab.data import DataError, read_idx, write_idx

# A label file holding 5, 0, 4 written by hand from the MNIST page's layout: magic 0x00000801, count 3, bytes.
HAND_LABELS = b"\x00\x00\x08\x01" + b"\x00\x00\x00\x03" + bytes([5, 0, 4])


def images_file_bytes(n=2, rows=3, cols=4):
    """A hand-built images file (magic 0x00000803) and the array it holds."""
    pixels = np.arange(n * rows * cols, dtype=np.uint8).reshape(n, rows, cols)
    return struct.pack(">4B3I", 0, 0, 8, 3, n, rows, cols) + pixels.tobytes(), pixels


def test_reads_hand_built_label_file(tmp_path):
    path = tmp_path / "labels"
    path.write_bytes(HAND_LABELS)
    labels = read_idx(path, ndim=1)
    assert labels.dtype == np.uint8
    np.testing.assert_array_equal(labels, [5, 0, 4])


def test_reads_hand_built_image_file(tmp_path):
    content, pixels = images_file_bytes()
    path = tmp_path / "images"
    path.write_bytes(content)
    np.testing.assert_array_equal(read_idx(path, ndim=3), pixels)


def test_writer_produces_the_documented_bytes(tmp_path):
    path = write_idx(tmp_path / "labels", np.array([5, 0, 4], dtype=np.uint8))
    assert path.read_bytes() == HAND_LABELS


def test_multibyte_values_are_big_endian(tmp_path):
    path = tmp_path / "ints"
    path.write_bytes(struct.pack(">4BI", 0, 0, 0x0C, 1, 2) + struct.pack(">2i", 1, -2))
    values = read_idx(path)
    assert values.dtype == np.int32
    np.testing.assert_array_equal(values, [1, -2])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("name", ["data.idx", "data.idx.gz"])
def test_round_trip(tmp_path, dtype, name):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal((4, 3, 2)) * 50).astype(dtype)
    back = read_idx(write_idx(tmp_path / name, array))
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, array)


def test_gzip_is_detected_from_bytes_not_name(tmp_path):
    misnamed_gz = tmp_path / "labels"  # gzip content, no .gz suffix
    misnamed_gz.write_bytes(gzip.compress(HAND_LABELS))
    misnamed_raw = tmp_path / "labels.gz"  # raw content, .gz suffix
    misnamed_raw.write_bytes(HAND_LABELS)
    np.testing.assert_array_equal(read_idx(misnamed_gz), [5, 0, 4])
    np.testing.assert_array_equal(read_idx(misnamed_raw), [5, 0, 4])


def test_gzip_output_is_reproducible(tmp_path):
    array = np.arange(100, dtype=np.uint8)
    first = write_idx(tmp_path / "a.gz", array).read_bytes()
    second = write_idx(tmp_path / "b.gz", array).read_bytes()
    assert first == second


def write(tmp_path, content, name="broken-idx"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_bad_magic_names_file_and_magic(tmp_path):
    path = write(tmp_path, b"\x01\x02\x08\x01" + HAND_LABELS[4:])
    with pytest.raises(DataError, match=r"broken-idx: bad magic number 0x01020801"):
        read_idx(path)


def test_unknown_dtype_code(tmp_path):
    path = write(tmp_path, b"\x00\x00\x07\x01" + HAND_LABELS[4:])
    with pytest.raises(DataError, match=r"broken-idx: bad magic number .*unknown dtype code 0x07"):
        read_idx(path)


def test_wrong_number_of_dimensions(tmp_path):
    path = write(tmp_path, HAND_LABELS)
    with pytest.raises(DataError, match=r"broken-idx: wrong number of dimensions: header says 1, expected 3"):
        read_idx(path, ndim=3)


def test_file_shorter_than_magic(tmp_path):
    with pytest.raises(DataError, match=r"broken-idx: 2 bytes is too short"):
        read_idx(write(tmp_path, b"\x00\x00"))


def test_truncated_header(tmp_path):
    content, _ = images_file_bytes()
    with pytest.raises(DataError, match=r"broken-idx: truncated header: 3 dimensions need 16 bytes, file has 10"):
        read_idx(write(tmp_path, content[:10]))


def test_truncated_payload(tmp_path):
    content, _ = images_file_bytes(n=2, rows=3, cols=4)
    with pytest.raises(DataError, match=r"broken-idx: truncated: shape \(2, 3, 4\) .* needs 24 data bytes, "
                                        r"file has 23"):
        read_idx(write(tmp_path, content[:-1]))


def test_extra_bytes(tmp_path):
    content, _ = images_file_bytes(n=2, rows=3, cols=4)
    with pytest.raises(DataError, match=r"broken-idx: extra bytes: .* needs 24 data bytes, file has 26"):
        read_idx(write(tmp_path, content + b"\x00\x00"))


def test_truncated_payload_inside_gzip(tmp_path):
    content, _ = images_file_bytes()
    with pytest.raises(DataError, match=r"broken-idx.gz: truncated"):
        read_idx(write(tmp_path, gzip.compress(content[:-5]), "broken-idx.gz"))


def test_cut_gzip_stream(tmp_path):
    compressed = gzip.compress(images_file_bytes()[0])
    with pytest.raises(DataError, match=r"broken-idx.gz: corrupt gzip stream"):
        read_idx(write(tmp_path, compressed[: len(compressed) // 2], "broken-idx.gz"))


def test_gzip_checksum_failure(tmp_path):
    compressed = bytearray(gzip.compress(images_file_bytes()[0]))
    compressed[-8] ^= 0xFF  # the CRC-32 of the trailer
    with pytest.raises(DataError, match=r"broken-idx.gz: corrupt gzip stream"):
        read_idx(write(tmp_path, bytes(compressed), "broken-idx.gz"))


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"absent: cannot read IDX file"):
        read_idx(tmp_path / "absent")


def test_writer_rejects_unsupported_dtype(tmp_path):
    with pytest.raises(DataError, match=r"dtype int64 has no IDX code"):
        write_idx(tmp_path / "x", np.zeros(3, dtype=np.int64))


def test_writer_rejects_scalar(tmp_path):
    with pytest.raises(DataError, match=r"shape \(\) cannot be stored"):
        write_idx(tmp_path / "x", np.uint8(3))
