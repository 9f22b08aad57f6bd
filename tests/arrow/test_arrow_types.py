"""Each Arrow type of SPEC.md Appendix A: its canonical type, and a value hashed as the reference hashes that canonical value."""
import decimal
import re

import numpy as np
import pyarrow as pa
import pytest

import dsha.arrow as da
import dsha_reference as ref
from dsha.arrow import UnsupportedTypeError
from dsha.arrow._types import struct_type


def _check(arr: pa.Array, canonical: str, json_values, name="c"):
    t = pa.table({name: arr})
    schema = f'struct<{ref.quote_name(name)}:{canonical}>'
    assert da.canonical_schema(t.schema) == schema
    want = ref.table_digest(schema, [{name: v} for v in json_values])
    assert [bytes(x).hex() for x in da.logical_hash(t).to_pylist()] == want["row_digests"]
    assert da.fingerprint(t).digest == want["digest"]


@pytest.mark.parametrize("typ,canonical,values", [
    (pa.bool_(), "boolean", [True, False, None]),
    (pa.int8(), "tinyint", [-128, 127, None]),
    (pa.int16(), "smallint", [-32768, None]),
    (pa.int32(), "int", [2**31 - 1, None]),
    (pa.int64(), "bigint", [-2**63, None]),
    (pa.uint8(), "smallint", [0, 255, None]),
    (pa.uint16(), "int", [65535, None]),
    (pa.uint32(), "bigint", [2**32 - 1, None]),
    (pa.float32(), "float", [1.5, None]),
    (pa.float64(), "double", [2.25, None]),
    (pa.string(), "string", ["hé", "", None]),
    (pa.large_string(), "string", ["hé", "", None]),
    (pa.binary(), "binary", [b"\x00\xff", b"", None]),
    (pa.large_binary(), "binary", [b"\x00\xff", None]),
    (pa.date32(), "date", [-25568, 19782, None]),
    (pa.null(), "void", [None, None]),
])
def test_simple(typ, canonical, values):
    json_values = [v.hex() if isinstance(v, bytes) else v for v in values]
    _check(pa.array(values, typ), canonical, json_values)


def test_uint64_is_decimal_20_0():
    _check(pa.array([2**64 - 1, 0, None], pa.uint64()), "decimal(20,0)", ["18446744073709551615", "0", None])


def test_float16_and_float_normalisation():
    _check(pa.array(np.array([1.5, -0.0, np.nan, np.inf], dtype=np.float16)), "float",
           [1.5, "-0.0", "NaN", "Infinity"])
    _check(pa.array([float("nan"), -0.0, float("-inf")], pa.float64()), "double", ["NaN", 0.0, "-Infinity"])
    weird_nan = np.array([0x7ff0000000000001], dtype=np.uint64).view(np.float64)
    _check(pa.array(weird_nan), "double", ["NaN"])


@pytest.mark.parametrize("make", [getattr(pa, "decimal32", None), getattr(pa, "decimal64", None), pa.decimal128,
                                  getattr(pa, "decimal256", None)])
def test_decimals(make):
    if make is None:
        pytest.skip("this pyarrow lacks the decimal width")
    D = decimal.Decimal
    _check(pa.array([D("123.45"), D("-0.01"), None], make(5, 2)), "decimal(5,2)", ["123.45", "-0.01", None])
    if make in (pa.decimal128, getattr(pa, "decimal256", None)):
        _check(pa.array([D("-12345678901234567890.123"), None], make(38, 3)), "decimal(38,3)",
               ["-12345678901234567890.123", None])
        _check(pa.array([D("-1"), D("99999999999999999999")], make(20, 0)), "decimal(20,0)",
               ["-1", "99999999999999999999"])


def test_decimal_precision_over_38():
    t = pa.table({"big": pa.array([decimal.Decimal(1)], pa.decimal256(40, 0))})
    with pytest.raises(UnsupportedTypeError, match="big.*40"):
        da.fingerprint(t)


def test_views_and_fixed_size_binary():
    if hasattr(pa, "string_view"):
        _check(pa.array(["a", None, "long string over twelve bytes"], pa.string_view()), "string",
               ["a", None, "long string over twelve bytes"])
        _check(pa.array([b"a", None], pa.binary_view()), "binary", ["61", None])
    _check(pa.array([b"abc", None, b"\x00\x00\x00"], pa.binary(3)), "binary", ["616263", None, "000000"])


def test_date64():
    _check(pa.array([86_400_000 * 5, -86_400_000, None], pa.date64()), "date", [5, -1, None])
    with pytest.raises(UnsupportedTypeError, match="column d.*whole day"):
        da.fingerprint(pa.table({"d": pa.array([1], pa.date64())}))


@pytest.mark.parametrize("unit,factor", [("s", 10**6), ("ms", 1000), ("us", 1), ("ns", None)])
@pytest.mark.parametrize("tz,canonical", [(None, "timestamp_ntz"), ("UTC", "timestamp"),
                                          ("Europe/Paris", "timestamp")])
def test_timestamps(unit, factor, tz, canonical):
    raw = [1_700_000_000, -5, None]
    if factor is None:
        arr = pa.array([v * 1000 if v is not None else None for v in raw], pa.timestamp("ns", tz=tz))
        _check(arr, canonical, raw)
    else:
        arr = pa.array(raw, pa.timestamp(unit, tz=tz))
        _check(arr, canonical, [v * factor if v is not None else None for v in raw])


def test_nanoseconds_not_whole_micros_are_an_error():
    t = pa.table({"s": pa.array([{"x": [1001]}], pa.struct([("x", pa.list_(pa.timestamp("ns")))]))})
    with pytest.raises(UnsupportedTypeError, match=r"s\.x\[\].*microseconds.*cast"):
        da.fingerprint(t)
    # a null slot with a sub-microsecond value underneath is fine
    arr = pa.Array.from_buffers(pa.timestamp("ns"), 2, [pa.py_buffer(bytes([0b01])),
                                                        pa.py_buffer(np.array([1000, 7], "<i8").tobytes())])
    _check(arr, "timestamp_ntz", [1, None])
    with pytest.raises(UnsupportedTypeError, match="t.*microseconds"):
        da.fingerprint(pa.table({"t": pa.array([1], pa.time64("ns"))}))
    with pytest.raises(UnsupportedTypeError, match="d.*microseconds"):
        da.fingerprint(pa.table({"d": pa.array([1], pa.duration("ns"))}))


def test_timestamp_overflow():
    with pytest.raises(UnsupportedTypeError, match="ts.*range"):
        da.fingerprint(pa.table({"ts": pa.array([2**62], pa.timestamp("s"))}))


def test_times():
    _check(pa.array([45296, None], pa.time32("s")), "time(0)", [45296 * 10**9, None])
    _check(pa.array([45296123], pa.time32("ms")), "time(3)", [45296123 * 10**6])
    _check(pa.array([45296123456], pa.time64("us")), "time(6)", [45296123456000])
    _check(pa.array([45296123456000], pa.time64("ns")), "time(6)", [45296123456000])


@pytest.mark.parametrize("unit,factor", [("s", 10**6), ("ms", 1000), ("us", 1), ("ns", None)])
def test_durations(unit, factor):
    if factor is None:
        _check(pa.array([-7000, None], pa.duration("ns")), "interval day to second", [-7, None])
    else:
        _check(pa.array([-7, None], pa.duration(unit)), "interval day to second", [-7 * factor, None])


def test_month_day_nano_interval():
    _check(pa.array([pa.MonthDayNano([14, 3, 5000]), None], pa.month_day_nano_interval()), "interval",
           [[14, 3, 5], None])
    with pytest.raises(UnsupportedTypeError, match="iv.*microseconds"):
        da.fingerprint(pa.table({"iv": pa.array([pa.MonthDayNano([0, 0, 1])], pa.month_day_nano_interval())}))


def test_lists():
    vals = [[1, None], [], None, [3]]
    for typ in [pa.list_(pa.int32()), pa.large_list(pa.int32())] + \
            ([pa.list_view(pa.int32()), pa.large_list_view(pa.int32())] if hasattr(pa, "list_view") else []):
        _check(pa.array(vals, typ), "array<int>", vals)
    _check(pa.array([[1, 2], None, [None, 4]], pa.list_(pa.int32(), 2)), "array<int>", [[1, 2], None, [None, 4]])
    # a list_view whose views overlap and are out of order
    if hasattr(pa, "ListViewArray"):
        lv = pa.ListViewArray.from_arrays(pa.array([2, 0, 1], pa.int32()), pa.array([2, 3, 0], pa.int32()),
                                          pa.array([10, 20, 30, 40], pa.int32()))
        _check(lv, "array<int>", [[30, 40], [10, 20, 30], []])


def test_maps():
    vals = [[(1, "a"), (2, None)], [], None]
    _check(pa.array(vals, pa.map_(pa.int32(), pa.string())), "map<int,string>",
           [[[1, "a"], [2, None]], [], None])
    # (Arrow itself rejects null map keys, so a map with a null key cannot be built to test dsha's own check.)
    _check(pa.array([[(1, 2), (1, 3)]], pa.map_(pa.int64(), pa.int64())).slice(0), "map<bigint,bigint>",
           [[[1, 2], [1, 3]]])


def test_structs():
    typ = pa.struct([("b", pa.int32()), ("a", pa.string())])
    _check(pa.array([{"b": 1, "a": "x"}, None, {"b": None, "a": None}], typ), 'struct<"a":string,"b":int>',
           [{"a": "x", "b": 1}, None, {"a": None, "b": None}])
    _check(pa.array([{}, None], pa.struct([])), "struct<>", [{}, None])
    dup = pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], names=["x", "x"])
    with pytest.raises(UnsupportedTypeError, match="s.*'x'.*twice"):
        da.fingerprint(pa.table({"s": dup}))


def test_dictionary_ree_extension():
    d = pa.array(["a", "b", None, "a"]).dictionary_encode()
    _check(d, "string", ["a", "b", None, "a"])
    d16 = pa.DictionaryArray.from_arrays(pa.array([1, 0, None], pa.int8()), pa.array([1.5, None]))
    _check(d16, "double", [None, 1.5, None])
    import pyarrow.compute as pc
    if hasattr(pc, "run_end_encode"):
        ree = pc.run_end_encode(pa.array([1, 1, None, 2], pa.int64()))
        _check(ree, "bigint", [1, 1, None, 2])
        _check(ree.slice(1, 2), "bigint", [1, None])
    if hasattr(pa, "uuid"):
        u = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([b"\x01" * 16, None], pa.binary(16)))
        _check(u, "binary", ["01" * 16, None])


def test_unsupported_types_name_the_column():
    u = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])])
    with pytest.raises(UnsupportedTypeError, match=r"column u: the Arrow type sparse_union"):
        da.fingerprint(pa.table({"u": u}))
    s = pa.StructArray.from_arrays([pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), u)], names=["x"])
    with pytest.raises(UnsupportedTypeError, match=r"column s\.x\[\]: .*union"):
        da.canonical_schema(pa.table({"s": s}).schema)


def test_columns_errors():
    t = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ValueError, match="twice"):
        da.fingerprint(t)
    with pytest.raises(ValueError, match="at least one column"):
        da.fingerprint(pa.table({}))


def test_sliced_nested_arrays():
    vals = [[1, 2], None, [3, None], [4, 5], [6, 7]]
    arr = pa.array(vals, pa.list_(pa.int64(), 2))
    _check(arr.slice(2), "array<bigint>", vals[2:])
    _check(arr.slice(1, 3), "array<bigint>", vals[1:4])
    mvals = [[("a", 1)], None, [("b", 2), ("c", None)], [], [("d", 4)]]
    m = pa.array(mvals, pa.map_(pa.string(), pa.int64()))
    want = [None if v is None else [list(e) for e in v] for v in mvals]
    _check(m.slice(2), "map<string,bigint>", want[2:])
    _check(m.slice(1, 2), "map<string,bigint>", want[1:3])
    if hasattr(pa, "list_view"):
        lv = pa.array(vals, pa.list_view(pa.int64()))
        _check(lv.slice(2, 2), "array<bigint>", vals[2:4])
    s = pa.array([{"l": [1], "m": [("k", "v")]}, None, {"l": None, "m": []}],
                 pa.struct([("l", pa.large_list(pa.int8())), ("m", pa.map_(pa.string(), pa.string()))]))
    _check(s.slice(1), 'struct<"l":array<tinyint>,"m":map<string,string>>', [None, {"l": None, "m": []}])


# Lone surrogates (Spark's JSON reader makes them from "\ud800") and how errors write them (SPEC.md §2.1).
LONE = [("a\ud800", r"a\uD800"), ("a\udbff", r"a\uDBFF"), ("\udfff", r"\uDFFF"), ("x\ud83dy", r"x\uD83Dy")]


@pytest.mark.parametrize("name,escaped", LONE)
def test_names_with_a_lone_surrogate_are_refused_as_the_reference_refuses_them(name, escaped):
    pd = pytest.importorskip("pandas")
    shown = re.escape(escaped)
    # Arrow itself cannot hold such a name (its error names no column): dsha refuses it first, naming it.
    with pytest.raises(UnsupportedTypeError, match=rf"column {shown}: the name {shown} is not valid Unicode"):
        da.fingerprint(pd.DataFrame({name: [1], "b": [2]}))
    # The schema rule at any depth, as the reference implementation states it.
    with pytest.raises(UnsupportedTypeError, match=rf"column s\.{shown}: the name {shown} is not valid Unicode"):
        struct_type([name, "y"], [pa.int64(), pa.int64()], "s")
    with pytest.raises(ref.SchemaError, match=rf"column s\.{shown}: the name {shown} is not valid Unicode"):
        ref.parse_schema(f'struct<"s":struct<{ref.quote_name(name)}:bigint,"y":bigint>>')


def test_valid_names_next_to_the_refused_ones_hash_as_the_reference_hashes_them():
    # '?' (what Java's encoder made of every lone surrogate) and a surrogate pair's code point are ordinary names.
    for name in ["a?", "a\U0001F600", "\U0010FFFF"]:
        _check(pa.array([1, None], pa.int64()), "bigint", [1, None], name=name)
    assert da.fingerprint(pa.table({"a?": [1]})).digest != da.fingerprint(pa.table({"a\U0001F600": [1]})).digest
