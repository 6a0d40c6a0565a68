"""The plain data a sandbox hands the judge (grading/exchange.py): a lossless round trip for plain data, and a
strict refusal of everything else, on both sides (encode in the sandbox, decode in the judge)."""

from __future__ import annotations

import io
import json
import pickle

import numpy as np
import pytest

from autograd_lab.course.grading import exchange
from autograd_lab.course.grading.exchange import DataError, decode, encode


def message(tree: object, blobs: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """A hand-made message: the JSON header, then the blobs."""
    return json.dumps({"tree": tree, "blobs": [len(b) for b in blobs]}).encode() + b"\n" + b"".join(blobs)


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_plain_data_makes_a_lossless_round_trip() -> None:
    value = {"none": None, "flag": True, "n": -3, "x": 0.1, "nan": float("nan"), "inf": float("-inf"), "s": "é",
             "list": [1, [2.5, "a"]], "tuple": (1, 2),
             "f32": np.arange(6, dtype=np.float32).reshape(2, 3), "c": np.array([1 + 2j]), "b": np.array([True]),
             "scalar": np.float32(1.5), "zero_d": np.array(2.0), "i8": np.int8(-1)}
    got = decode(encode(value))
    assert got["tuple"] == [1, 2]  # tuples become lists
    assert np.isnan(got["nan"]) and got["inf"] == float("-inf")
    assert got["f32"].dtype == np.float32 and np.array_equal(got["f32"], value["f32"])
    assert type(got["scalar"]) is np.float32 and got["scalar"] == np.float32(1.5)  # a scalar stays a scalar ...
    assert type(got["zero_d"]) is np.ndarray and got["zero_d"].shape == ()  # ... and a 0-d array stays an array
    assert type(got["i8"]) is np.int8
    assert {k: v for k, v in got.items() if not isinstance(v, (np.ndarray, np.generic, float))} == {
        "none": None, "flag": True, "n": -3, "s": "é", "list": [1, [2.5, "a"]], "tuple": [1, 2]}


@pytest.mark.parametrize("value, where", [
    ({"y": object()}, "results['y']"),
    ({"y": np.array(["a"])}, "results['y']: NumPy dtype <U1"),
    ({"y": np.array([1], dtype=object)}, "results['y']: NumPy dtype object"),
    ({"y": np.zeros(1, dtype=[("a", "f8")])}, "results['y']"),
    ({1: 2}, "dict keys must be str"),
    ({"$array": 0}, "may not begin with '$'"),
    ({"s": "x" * (exchange.MAX_STRING + 1)}, "longer than"),
])
def test_encode_names_the_first_value_that_is_not_plain_data(value: object, where: str) -> None:
    with pytest.raises(DataError, match=where.replace("[", r"\[").replace("]", r"\]").replace("$", r"\$")):
        encode(value)


def test_encode_refuses_more_than_the_byte_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exchange, "MAX_BYTES", 1000)
    with pytest.raises(DataError, match="more than the limit of 1000"):
        encode({"y": np.zeros(200)})


def test_a_pickle_is_refused() -> None:
    with pytest.raises(DataError, match="not JSON"):
        decode(pickle.dumps({"y": 1}))


def test_an_object_array_blob_is_refused_without_unpickling() -> None:
    blob = npy(np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="dtype object is not plain data"):
        decode(message({"y": {"$array": 0}}, [blob]))


@pytest.mark.parametrize("array", [np.array(["text"]), np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]),
                                   np.zeros(2, dtype="V8")])
def test_string_structured_and_void_arrays_are_refused(array: np.ndarray) -> None:
    with pytest.raises(DataError, match="not plain data"):
        decode(message({"y": {"$array": 0}}, [npy(array)]))


def test_an_oversized_message_is_refused_before_it_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    data = encode({"y": np.zeros(100)})
    monkeypatch.setattr(exchange, "MAX_BYTES", len(data) - 1)
    with pytest.raises(DataError, match="more than the limit"):
        decode(data)


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(DataError, match="duplicate key 'y'"):
        decode(b'{"tree": {"y": 1, "y": 2}, "blobs": []}\n')


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_bare_non_finite_json_constants_are_refused(constant: str) -> None:
    with pytest.raises(DataError, match="bare"):
        decode(f'{{"tree": {{"y": {constant}}}, "blobs": []}}\n'.encode())


def test_trailing_bytes_are_refused() -> None:
    with pytest.raises(DataError, match="do not add up"):
        decode(encode({"y": 1}) + b"x")
    blob = npy(np.zeros(2)) + b"extra"
    with pytest.raises(DataError, match="bytes after its array"):
        decode(message({"y": {"$array": 0}}, [blob]))


@pytest.mark.parametrize("tree", [{"$foo": 1}, {"$float": "nan", "y": 1}, {"$float": "1e400"}, {"$array": 5},
                                  {"$scalar": 0}])
def test_dollar_keys_are_only_the_markers_and_only_alone(tree: dict) -> None:
    blobs = [npy(np.zeros(2))] if tree == {"$scalar": 0} else []
    with pytest.raises(DataError):
        decode(message(tree, blobs))


def test_a_blob_used_twice_or_not_at_all_is_refused() -> None:
    blob = npy(np.zeros(2))
    with pytest.raises(DataError, match="already used"):
        decode(message([{"$array": 0}, {"$array": 0}], [blob]))
    with pytest.raises(DataError, match="not referred to"):
        decode(message([1], [blob]))


@pytest.mark.parametrize("data", [b"", b"no header line", b"[1]\n", b'{"tree": 1}\n', b'{"tree": 1, "blobs": [-1]}\n',
                                  "not bytes"])
def test_malformed_headers_are_refused(data: object) -> None:
    with pytest.raises(DataError):
        decode(data)  # type: ignore[arg-type]
