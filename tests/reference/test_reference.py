"""Unit tests of the independent reference implementation (tests/reference/dsha_reference.py).

None of these depend on dsha's engine (JVM or Python package): expected values are either derived from the
specification text itself, or computed by a second, independent implementation written here (a pure-Python port
of the published MurmurHash3_x64_128).
"""

import hashlib
import json
import os
import random
import struct
import subprocess
import sys

import mmh3
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dsha_reference as ref  # noqa: E402

GOLDEN = os.path.join(HERE, os.pardir, "golden", "vectors.json")

# ----------------------------------------------------------------------------------------------------------------
# A second, independent MurmurHash3_x64_128: a straightforward port of Austin Appleby's MurmurHash3.cpp (SMHasher)
# ----------------------------------------------------------------------------------------------------------------

M64 = (1 << 64) - 1


def _rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    k ^= k >> 33
    return k


def murmur3_x64_128_port(data: bytes, seed: int = 0) -> bytes:
    length = len(data)
    nblocks = length // 16
    h1 = seed & 0xFFFFFFFF
    h2 = seed & 0xFFFFFFFF
    c1 = 0x87C37B91114253D5
    c2 = 0x4CF5AD432745937F
    for i in range(nblocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        k1 = (k1 * c1) & M64
        k1 = _rotl64(k1, 31)
        k1 = (k1 * c2) & M64
        h1 ^= k1
        h1 = _rotl64(h1, 27)
        h1 = (h1 + h2) & M64
        h1 = (h1 * 5 + 0x52DCE729) & M64
        k2 = (k2 * c2) & M64
        k2 = _rotl64(k2, 33)
        k2 = (k2 * c1) & M64
        h2 ^= k2
        h2 = _rotl64(h2, 31)
        h2 = (h2 + h1) & M64
        h2 = (h2 * 5 + 0x38495AB5) & M64
    tail = data[16 * nblocks:]
    t = len(tail)
    k1 = k2 = 0
    # the fall-through switch of the reference, tail bytes 8..14 into k2, 0..7 into k1
    for j in range(min(t, 15) - 1, 7, -1):
        k2 ^= tail[j] << (8 * (j - 8))
    if t > 8:
        k2 = (k2 * c2) & M64
        k2 = _rotl64(k2, 33)
        k2 = (k2 * c1) & M64
        h2 ^= k2
    for j in range(min(t, 8) - 1, -1, -1):
        k1 ^= tail[j] << (8 * j)
    if t > 0:
        k1 = (k1 * c1) & M64
        k1 = _rotl64(k1, 31)
        k1 = (k1 * c2) & M64
        h1 ^= k1
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    # out[0] = h1, out[1] = h2, written little-endian (SPEC §4.1)
    return h1.to_bytes(8, "little") + h2.to_bytes(8, "little")


def test_murmur_port_matches_mmh3_on_random_inputs():
    rng = random.Random(20240229)
    for n in range(0, 101):
        for _ in range(5):
            data = bytes(rng.randrange(256) for _ in range(n))
            assert mmh3.hash_bytes(data, 0, x64arch=True) == murmur3_x64_128_port(data), n
            assert ref.murmur3_x64_128(data) == murmur3_x64_128_port(data), n
    # longer inputs too, across several 16-byte blocks
    for n in (127, 128, 129, 1000, 4099):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert ref.murmur3_x64_128(data) == murmur3_x64_128_port(data)


def test_murmur_empty_input_is_zero():
    # With seed 0 and no input: h1 = h2 = 0, no blocks, no tail, h ^= len (0), h1 + h2 = 0 and fmix64(0) = 0,
    # so the digest is 16 zero bytes.
    assert murmur3_x64_128_port(b"") == bytes(16)
    assert ref.murmur3_x64_128(b"") == bytes(16)


def _smhasher_verification(h):
    """SMHasher's VerificationTest: hash {}, {0}, {0,1}, ... (length i, seed 256 - i), then hash the
    concatenation with seed 0; the first 4 bytes little-endian are the verification value."""
    key = bytes(range(256))
    hashes = b"".join(h(key[:i], 256 - i) for i in range(256))
    final = h(hashes, 0)
    return int.from_bytes(final[:4], "little")


def test_murmur_smhasher_verification_value():
    # 0x6384BA69 is the verification value SMHasher publishes for MurmurHash3_x64_128 ("Murmur3F").
    assert _smhasher_verification(murmur3_x64_128_port) == 0x6384BA69
    assert _smhasher_verification(lambda d, s: mmh3.hash_bytes(d, s, x64arch=True)) == 0x6384BA69


def test_digest_byte_order_is_h1_le_then_h2_le():
    data = b"hello, dsha"
    h1, h2 = mmh3.hash64(data, 0, x64arch=True, signed=False)
    assert ref.murmur3_x64_128(data) == struct.pack("<QQ", h1, h2)
    assert ref.u128_of(ref.murmur3_x64_128(data)) == h1 + (h2 << 64)


# ----------------------------------------------------------------------------------------------------------------
# Multiformats
# ----------------------------------------------------------------------------------------------------------------


def test_varint():
    assert ref.varint(0x3D5A01) == bytes([0x81, 0xB4, 0xF5, 0x01])
    assert ref.varint(32) == b"\x20"
    assert ref.varint(0) == b"\x00"
    assert ref.varint(127) == b"\x7f"
    assert ref.varint(128) == b"\x80\x01"
    assert ref.varint(300) == b"\xac\x02"


def test_multihash_prefix_and_digest_string():
    res = ref.table_digest('struct<"a":int>', [{"a": 1}])
    assert res["multihash"][:5] == bytes([0x81, 0xB4, 0xF5, 0x01, 0x20])
    assert len(res["multihash"]) == 5 + 32
    assert res["digest"].startswith("f81b4f50120")
    assert len(res["digest"]) == 75
    assert res["digest"] == "f" + res["multihash"].hex()
    assert res["digest"] == res["digest"].lower()


# ----------------------------------------------------------------------------------------------------------------
# Canonical schema
# ----------------------------------------------------------------------------------------------------------------


def test_canonical_order_is_utf8_bytes():
    names = ["é", "ab", "a", "Z", "\U00010000", "\uffff"]
    got = [n for n, _ in ref.parse_schema(
        "struct<" + ",".join(ref.quote_name(n) + ":int" for n in names) + ">").fields]
    # "Z" (5a) < "a" (61) < "ab" < "é" (c3 a9) < U+FFFF (ef bf bf) < U+10000 (f0 90 80 80);
    # UTF-16 order would put U+10000 (d800 dc00) before U+FFFF.
    assert got == ["Z", "a", "ab", "é", "\uffff", "\U00010000"]
    assert ref.name_key("a") < ref.name_key("ab")


def test_spec_example_schema():
    s = 'struct<"id":bigint,"tags":array<string>,"amount":decimal(10,2)>'
    assert ref.canonical_schema(s) == 'struct<"amount":decimal(10,2),"id":bigint,"tags":array<string>>'
    assert ref.schema_digest(s) == hashlib.sha256(
        b'struct<"amount":decimal(10,2),"id":bigint,"tags":array<string>>').digest()


def test_quoting():
    assert ref.quote_name('a"b\\c') == '"a\\"b\\\\c"'
    assert ref.quote_name("é <x>,:y") == '"é <x>,:y"'
    for name in ['a"b', "a\\b", '\\"', "x<y>", "a,b:c", "", " "]:
        s = "struct<" + ref.quote_name(name) + ':struct<"in":int>>'
        t = ref.parse_schema(s)
        assert t.fields[0][0] == name
        assert t.render() == s


def test_parse_all_type_names():
    types = [
        "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(38,38)",
        "string", "string collate UTF8_LCASE", "string collate UNICODE_CI", "binary", "date", "timestamp",
        "timestamp_ntz", "time(6)", "time(0)", "timestamp_ntz(9)", "interval", "interval year",
        "interval year to month", "interval month", "interval day", "interval day to hour",
        "interval day to minute", "interval day to second", "interval hour", "interval hour to minute",
        "interval hour to second", "interval minute", "interval minute to second", "interval second", "void",
        "variant", "array<int>", "map<string,array<int>>", "map<string collate UTF8_LCASE,int>", "struct<>",
        'struct<"a":map<int,struct<"b":variant>>>',
    ]
    for ty in types:
        s = f'struct<"c":{ty}>'
        assert ref.canonical_schema(s) == s, ty


@pytest.mark.parametrize("bad", [
    'struct<>', 'struct<"a":geometry>', 'struct<"a":int,"a":bigint>', 'struct<"a":decimal(39,0)>',
    'struct<"a":decimal(5,6)>', 'struct<"a":string collate UTF8_BINARY>', 'struct<"a":interval month to year>',
    'struct<"a":interval day to month>', 'struct<a:int>', 'struct<"a":int> ', 'struct<"a" : int>',
    'struct<"a\\x":int>', 'int', 'struct<"a":array<int>', 'struct<"a":char(3)>',
])
def test_schema_errors(bad):
    with pytest.raises(ValueError):
        ref.parse_schema(bad)


@pytest.mark.parametrize("schema,message", [
    ('struct<"a\ud800":bigint>', r"column a\uD800: the name a\uD800 is not valid Unicode"),
    ('struct<"b":int,"a\udbff":bigint>', r"column a\uDBFF: the name a\uDBFF is not valid Unicode"),
    ('struct<"s":struct<"y":int,"x\udfff":int>>', r"column s.x\uDFFF: the name x\uDFFF is not valid"),
    ('struct<"arr":array<struct<"\udc00z":int>>>', r"column arr[].\uDC00z: the name \uDC00z is not valid"),
    ('struct<"m":map<string,struct<"\ud83d":int>>>', r"column m.value.\uD83D: the name \uD83D is not valid"),
])
def test_names_with_a_lone_surrogate_are_refused_naming_the_column(schema, message):
    # SPEC §2.1: no UTF-8 encoding, so no digest; never '?' (which would make a\ud800, a\udbff and a? one name).
    with pytest.raises(ref.SchemaError) as e:
        ref.parse_schema(schema)
    assert message in str(e.value)
    assert ref.canonical_schema('struct<"a?":bigint>') == 'struct<"a?":bigint>'
    # A surrogate pair is one code point: its UTF-8 bytes, 4 of them, are hashed and ordered as such.
    pair = 'struct<"\U0001F600":bigint,"\uffff":bigint>'
    assert ref.canonical_schema(pair) == 'struct<"\uffff":bigint,"\U0001F600":bigint>'
    assert ref.schema_digest(pair) == hashlib.sha256(
        b'struct<"\xef\xbf\xbf":bigint,"\xf0\x9f\x98\x80":bigint>').digest()


def test_collation_names_as_spark_prints_them():
    # SPEC §2.3: UTF8 family, or locale (UNICODE | language[_Script][_CCC]) then _CI, _AI, _RTRIM in that order
    for name in ("UTF8_LCASE", "UTF8_LCASE_RTRIM", "UTF8_BINARY_RTRIM", "UNICODE", "UNICODE_CI", "UNICODE_AI",
                 "UNICODE_CI_AI", "UNICODE_CI_AI_RTRIM", "en", "en_CI", "en_USA", "en_USA_CI_AI", "de_AI_RTRIM",
                 "sr_Cyrl_SRB_AI", "zh_Hant", "zh_Hant_TWN_CI", "ceb", "pa_Guru_IND"):
        s = f'struct<"s":string collate {name}>'
        assert ref.canonical_schema(s) == s, name
    for name in ("UTF8_BINARY", "unicode_ci", "Unicode", "en_ci", "EN_CI", "en_AI_CI", "en_usa", "en_US", "de_CS",
                 "en_AS", "en_RTRIM_CI", "zh_HANT", "zh_TWN_Hant", "UTF8_LCASE_CI", "UTF8_BINARY_LCASE", "en_LTRIM",
                 "UNICODE_TRIM"):
        with pytest.raises(ValueError, match=name):
            ref.parse_schema(f'struct<"s":string collate {name}>')


def test_names_and_types_are_significant():
    a = ref.row_digest('struct<"a":int>', {"a": 1})
    assert a != ref.row_digest('struct<"A":int>', {"A": 1})
    assert a != ref.row_digest('struct<"b":int>', {"b": 1})
    assert ref.row_digest('struct<"a":decimal(10,2)>', {"a": "1"}) != \
        ref.row_digest('struct<"a":decimal(11,2)>', {"a": "1"})
    assert ref.row_digest('struct<"a":string>', {"a": "x"}) != \
        ref.row_digest('struct<"a":string collate UTF8_LCASE>', {"a": "x"})


# ----------------------------------------------------------------------------------------------------------------
# Row encoding
# ----------------------------------------------------------------------------------------------------------------


def test_row_digest_by_hand():
    s = 'struct<"a":int,"b":string>'
    sd = hashlib.sha256(s.encode()).digest()
    data = sd + b"\x01" + struct.pack("<i", 1) + b"\x01" + struct.pack("<I", 1) + b"x"
    assert ref.row_digest(s, {"b": "x", "a": 1}) == murmur3_x64_128_port(data)
    # nulls are one 0x00 byte each
    assert ref.row_digest(s, {"a": None, "b": None}) == murmur3_x64_128_port(sd + b"\x00\x00")


def test_nan_and_negative_zero_normalisation():
    s = 'struct<"d":double,"f":float>'
    assert ref.row_digest(s, {"d": "-0.0", "f": "-0.0"}) == ref.row_digest(s, {"d": 0.0, "f": 0.0})
    assert ref.row_digest(s, {"d": -0.0, "f": -0.0}) == ref.row_digest(s, {"d": 0, "f": 0})
    assert ref.double_bits(float("nan")) == struct.pack("<Q", 0x7FF8000000000000)
    assert ref.float_bits(float("nan")) == struct.pack("<I", 0x7FC00000)
    other_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF0000000000001))[0]
    assert ref.double_bits(other_nan) == struct.pack("<Q", 0x7FF8000000000000)
    assert ref.double_bits(float("inf")) == struct.pack("<Q", 0x7FF0000000000000)
    assert ref.float_bits(float("-inf")) == struct.pack("<I", 0xFF800000)
    assert ref.float_bits(1.5) == struct.pack("<I", 0x3FC00000)
    assert ref.float_bits(0.1) == struct.pack("<f", 0.1)  # rounded to binary32
    assert ref.row_digest(s, {"d": "NaN", "f": "NaN"}) != ref.row_digest(s, {"d": 0.0, "f": 0.0})


def test_map_order_independence():
    s = 'struct<"m":map<int,int>>'
    a = ref.row_digest(s, {"m": [[1, 2], [3, 4]]})
    assert a == ref.row_digest(s, {"m": [[3, 4], [1, 2]]})
    assert a != ref.row_digest(s, {"m": [[2, 1], [4, 3]]})
    assert a != ref.row_digest(s, {"m": [[1, 4], [3, 2]]})
    # layout: u32 count then the sum of entry digests
    e1 = murmur3_x64_128_port(b"\x01" + struct.pack("<i", 1) + b"\x01" + struct.pack("<i", 2))
    e2 = murmur3_x64_128_port(b"\x01" + struct.pack("<i", 3) + b"\x01" + struct.pack("<i", 4))
    total = (int.from_bytes(e1, "little") + int.from_bytes(e2, "little")) % (1 << 128)
    t = ref.parse_schema(s).fields[0][1]
    assert ref.encode_value(t, [[1, 2], [3, 4]]) == struct.pack("<I", 2) + total.to_bytes(16, "little")
    assert ref.encode_value(t, []) == struct.pack("<I", 0) + bytes(16)


def test_nesting_boundaries():
    s = 'struct<"v":array<array<int>>>'
    assert ref.row_digest(s, {"v": [[1, 2], [3]]}) != ref.row_digest(s, {"v": [[1], [2, 3]]})
    s = 'struct<"v":array<string>>'
    assert ref.row_digest(s, {"v": ["ab", "c"]}) != ref.row_digest(s, {"v": ["a", "bc"]})
    assert ref.row_digest(s, {"v": ["x", None]}) != ref.row_digest(s, {"v": ["x"]})


def test_null_empty_distinct():
    s = 'struct<"s":string,"a":array<int>,"t":struct<>>'
    variants = [
        {"s": None, "a": None, "t": None},
        {"s": "", "a": None, "t": None},
        {"s": None, "a": [], "t": None},
        {"s": None, "a": None, "t": {}},
    ]
    assert len({ref.row_digest(s, r) for r in variants}) == len(variants)


def test_struct_field_order_irrelevant():
    a = ref.row_digest('struct<"s":struct<"b":int,"a":string>>', {"s": {"b": 1, "a": "x"}})
    b = ref.row_digest('struct<"s":struct<"a":string,"b":int>>', {"s": {"a": "x", "b": 1}})
    assert a == b


def test_decimals():
    t = ref.parse_schema('struct<"a":decimal(10,2)>').fields[0][1]
    assert ref.encode_value(t, "12.34") == struct.pack("<q", 1234)
    assert ref.encode_value(t, "12.3") == struct.pack("<q", 1230)
    assert ref.encode_value(t, "-0.01") == struct.pack("<q", -1)
    with pytest.raises(ValueError):
        ref.encode_value(t, "12.345")  # not exact at scale 2
    with pytest.raises(ValueError):
        ref.encode_value(t, "123456789.00")  # 11 digits > precision 10
    assert ref.encode_value(t, "12") == struct.pack("<q", 1200)  # fewer fractional digits than the scale
    assert ref.encode_value(t, "12.3400") == struct.pack("<q", 1234)  # more, if they are zeros
    assert ref.encode_value(t, "-0.00") == struct.pack("<q", 0)
    # SPEC §10: a string in plain notation, -?digits[.digits]; nothing else
    for bad in ("1.2E+1", "+12.34", " 12.34", "12.", ".5", "1_000.00", "NaN", "Infinity", "0x10", "", "--1"):
        with pytest.raises(ValueError):
            ref.encode_value(t, bad)
    for bad in (12, 12.34, True, None, ["12.34"]):
        with pytest.raises(ValueError):
            ref.encode_value(t, bad)
    t = ref.parse_schema('struct<"a":decimal(20,0)>').fields[0][1]
    assert ref.encode_value(t, "1") == (1).to_bytes(16, "little")
    assert ref.encode_value(t, "-1") == b"\xff" * 16
    t = ref.parse_schema('struct<"a":decimal(38,18)>').fields[0][1]
    v = "-12345678901234567890.123456789012345678"
    assert ref.encode_value(t, v) == (-12345678901234567890123456789012345678 % (1 << 128)).to_bytes(16, "little")


def test_intervals_and_times():
    s = 'struct<"c":interval>'
    t = ref.parse_schema(s).fields[0][1]
    assert ref.encode_value(t, [14, 3, 7]) == struct.pack("<iiq", 14, 3, 7)
    t = ref.parse_schema('struct<"t":timestamp_ntz(9)>').fields[0][1]
    assert ref.encode_value(t, [1704103200123456, 789]) == struct.pack("<qh", 1704103200123456, 789)
    t = ref.parse_schema('struct<"t":time(6)>').fields[0][1]
    assert ref.encode_value(t, 45296123456000) == struct.pack("<q", 45296123456000)


def test_value_type_errors():
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":int>', {"a": 2 ** 31})
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":int>', {"a": True})
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":int>', {"b": 1})
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":int>', {})
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":void>', {"a": 1})
    with pytest.raises(ValueError):
        ref.row_digest('struct<"a":double>', {"a": "nan"})


# ----------------------------------------------------------------------------------------------------------------
# Variant
# ----------------------------------------------------------------------------------------------------------------


def _v(text):
    return ref.encode_variant(ref.parse_variant_text(text))


def test_variant_decimal_text():
    import decimal
    cases = {"1.50": "1.5", "100": "100", "100.00": "100", "-0.010": "-0.01", "0.0": "0", "-0.0": "0",
             "0": "0", "0.001": "0.001", "12.340": "12.34",
             # SPEC §3.6: no "1." for 1.0, no negative zero, plain notation for values stored with an exponent
             "1.0": "1", "-1.0": "-1", "0.00": "0", "-0.00": "0", "1E+3": "1000", "1.000E+3": "1000",
             "-1E+3": "-1000", "1000": "1000", "1000.000": "1000", "1.5E-3": "0.0015", "-5E-38": "-0." + "0" * 37 + "5",
             "12345678901234567890123456789012345678": "12345678901234567890123456789012345678"}
    for inp, out in cases.items():
        assert ref.variant_decimal_text(decimal.Decimal(inp)) == out, inp


def test_variant_numbers_in_vectors():
    # SPEC §10: numbers in a variant's JSON text are read as Spark's parse_json reads them
    def dec(text):
        return b"\x05" + struct.pack("<I", len(text)) + text.encode()

    def dbl(x):
        return b"\x04" + struct.pack("<d", x)

    assert _v("1.0") == dec("1")
    assert _v("-0.0") == dec("0")  # a decimal zero, not a double -0.0
    assert _v("0.00") == dec("0")
    assert _v("1000.000") == dec("1000") == _v("1000.0")  # how a vector writes a decimal 1000 of scale 0
    assert _v("1000") == b"\x02" + struct.pack("<q", 1000)  # an integer, not a decimal
    assert _v("9223372036854775807") == b"\x02" + struct.pack("<q", 2 ** 63 - 1)
    assert _v("9223372036854775808") == dec("9223372036854775808")  # beyond i64: a decimal (38 digits at most)
    assert _v("-" + "9" * 38) == dec("-" + "9" * 38)
    assert _v("1" * 39) == dbl(float("1" * 39))  # 39 digits: a double
    assert _v("0." + "0" * 38 + "1") == dbl(1e-39)  # scale 39: a double
    assert _v("1E+3") == _v("1e3") == _v("1.0E3") == dbl(1000.0)  # an exponent: a double
    assert _v("-0e0") == dbl(0.0)  # a double -0.0, normalised (SPEC §3.2)


def test_variant_encoding():
    assert _v("null") == b"\x00"
    assert _v("true") == b"\x01\x01"
    assert _v("-3000000000") == b"\x02" + struct.pack("<q", -3000000000)
    assert _v("2.50") == b"\x05" + struct.pack("<I", 3) + b"2.5"
    assert _v("2.50") == _v("2.5")
    assert _v("1") != _v("1.0")
    assert _v('"x"') == b"\x09" + struct.pack("<I", 1) + b"x"
    assert _v("[1,null]") == b"\x0c" + struct.pack("<I", 2) + b"\x02" + struct.pack("<q", 1) + b"\x00"
    fd = murmur3_x64_128_port(struct.pack("<I", 1) + b"c" + b"\x02" + struct.pack("<q", -1))
    assert _v('{"c":-1}') == b"\x0d" + struct.pack("<I", 1) + fd


def test_variant_object_order_independence():
    s = 'struct<"j":variant>'
    a = ref.row_digest(s, {"j": {"variant": '{"b":[1,2.50],"a":{"c":-1,"d":"x"}}'}})
    b = ref.row_digest(s, {"j": {"variant": '{"a":{"d":"x","c":-1},"b":[1,2.5]}'}})
    assert a == b
    c = ref.row_digest(s, {"j": {"variant": '{"a":{"d":"x","c":-1},"b":[2.5,1]}'}})
    assert a != c
    # SQL NULL versus variant null
    assert ref.row_digest(s, {"j": None}) != ref.row_digest(s, {"j": {"variant": "null"}})


def test_variant_duplicate_keys_rejected():
    with pytest.raises(ValueError):
        _v('{"a":1,"a":2}')


# ----------------------------------------------------------------------------------------------------------------
# Table digest
# ----------------------------------------------------------------------------------------------------------------


def test_table_digest_properties():
    s = 'struct<"id":int,"name":string>'
    rows = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    base = ref.table_digest(s, rows)
    assert ref.table_digest(s, rows[::-1])["digest"] == base["digest"]
    assert ref.table_digest(s, rows + [rows[1]])["digest"] != base["digest"]
    assert ref.table_digest(s, [{"id": 1, "name": "b"}, {"id": 2, "name": "a"}])["digest"] != base["digest"]
    total = sum(int.from_bytes(ref.row_digest(s, r), "little") for r in rows) % (1 << 128)
    assert base["content_sum"] == format(total, "032x")
    assert base["rows"] == 2
    sd = hashlib.sha256(s.encode()).digest()
    assert base["schema_digest"] == sd.hex()
    final = hashlib.sha256(b"dsha-v1" + sd + struct.pack("<Q", 2) + total.to_bytes(16, "little")).digest()
    assert base["digest"] == "f81b4f50120" + final.hex()


def test_empty_table():
    s = 'struct<"id":int>'
    res = ref.table_digest(s, [])
    sd = hashlib.sha256(s.encode()).digest()
    assert res["content_sum"] == "0" * 32
    assert res["digest"] == "f81b4f50120" + hashlib.sha256(b"dsha-v1" + sd + bytes(8) + bytes(16)).hexdigest()


def test_sum_wraps_modulo_2_128():
    # sum of digests is modulo 2^128: many identical rows eventually wrap
    s = 'struct<"a":int>'
    d = int.from_bytes(ref.row_digest(s, {"a": 1}), "little")
    n = 1000
    res = ref.table_digest(s, [{"a": 1}] * n)
    assert int(res["content_sum"], 16) == (d * n) % (1 << 128)


# ----------------------------------------------------------------------------------------------------------------
# Digest states (SPEC §11)
# ----------------------------------------------------------------------------------------------------------------


def _state(schema, rows):
    res = ref.table_digest(schema, rows)
    return ref.serialise_state(schema, len(rows), int(res["content_sum"], 16))


def test_state_layout_by_hand():
    s = 'struct<"a":int>'
    state = _state(s, [{"a": 1}])
    sd = hashlib.sha256(s.encode()).digest()
    assert state == (b"DSHS\x01" + bytes([0x81, 0xB4, 0xF5, 0x01]) + struct.pack("<I", 32) + sd
                     + struct.pack("<Q", 1) + struct.pack("<I", 16) + ref.row_digest(s, {"a": 1})
                     + struct.pack("<I", len(s)) + s.encode())
    assert len(state) == 77 + len(s)
    assert ref.parse_state(state) == {"schema": s, "schema_digest": sd, "rows": 1,
                                      "sum": int.from_bytes(ref.row_digest(s, {"a": 1}), "little")}


def test_merging_the_states_of_any_split_gives_the_state_of_the_whole():
    s = 'struct<"id":int,"name":string>'
    rnd = random.Random(5)
    rows = [{"id": rnd.randint(-5, 5), "name": rnd.choice(["", "a", None, "bc"])} for _ in range(40)]
    whole = _state(s, rows)
    for _ in range(10):
        k = rnd.randint(1, 6)
        parts = [[] for _ in range(k)]
        for r in rows:
            parts[rnd.randrange(k)].append(r)
        states = [_state(s, p) for p in parts]
        rnd.shuffle(states)
        merged = states[0]
        for st in states[1:]:
            merged = ref.merge_states(merged, st)
        assert merged == whole
    assert ref.finalise_state(whole) == ref.table_digest(s, rows)["digest"]


def test_merge_wraps_modulo_2_128():
    s = 'struct<"a":int>'
    big = ref.serialise_state(s, 3, (1 << 128) - 1)
    merged = ref.parse_state(ref.merge_states(big, ref.serialise_state(s, 2, 5)))
    assert merged["sum"] == 4 and merged["rows"] == 5


def test_states_of_different_schemas_do_not_merge():
    with pytest.raises(ref.StateError, match=r'struct<"a":int> and struct<"b":int>'):
        ref.merge_states(_state('struct<"a":int>', []), _state('struct<"b":int>', []))


def test_malformed_states():
    good = _state('struct<"a":int>', [{"a": 1}])
    cases = {
        b"hello": "bad magic",
        good[:4] + b"\x02" + good[5:]: "format version 2",
        good + b"\x00": "1 bytes after the schema",
        good[:-1] + b"x": "does not match its digest",
        good[:5] + bytes([0x81, 0xB4, 0xF5, 0x02]) + good[9:]: "unknown algorithm code 0x5d5a01",
        good[:5] + bytes([0x81, 0xB4, 0xF5, 0x81, 0x00]) + good[9:]: "not a minimal varint",
    }
    for bad, message in cases.items():
        with pytest.raises(ref.StateError, match=message):
            ref.parse_state(bad)
    for n in range(len(good)):
        with pytest.raises(ref.StateError, match="truncated|bad magic"):
            ref.parse_state(good[:n])


# ----------------------------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------------------------

SCRIPT = os.path.join(HERE, "dsha_reference.py")


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_fill_never_overwrites_and_check(tmp_path):
    s = 'struct<"a":int>'
    good = ref.table_digest(s, [{"a": 1}])
    doc = {"algorithm": "dsha-v1", "vectors": [
        {"name": "missing", "sql": "SELECT 1 AS a", "schema": s, "rows": [{"a": 1}]},
        {"name": "wrong", "sql": "SELECT 1 AS a", "schema": s, "rows": [{"a": 1}], "dsha": "fbogus"},
    ]}
    p = tmp_path / "v.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    r = _run("fill", str(p))
    out = json.loads(p.read_text(encoding="utf-8"))
    assert out["vectors"][0]["dsha"] == good["digest"]
    assert out["vectors"][0]["row_digests"] == good["row_digests"]
    assert out["vectors"][0]["content_sum"] == good["content_sum"]
    assert out["vectors"][0]["schema_digest"] == good["schema_digest"]
    assert out["vectors"][1]["dsha"] == "fbogus"  # kept
    assert out["vectors"][1]["schema_digest"] == good["schema_digest"]  # missing fields added
    assert r.returncode == 1 and "CONFLICT" in r.stdout
    r = _run("check", str(p))
    assert r.returncode == 1
    assert r.stdout.strip().splitlines()[-1] == "1 passed, 1 failed"


def test_fill_only_the_named_vectors_and_arguments(tmp_path):
    s = 'struct<"a":int>'
    doc = {"algorithm": "dsha-v1", "vectors": [
        {"name": "one", "sql": "SELECT 1 AS a", "arguments": "A", "schema": s, "rows": [{"a": 1}]},
        {"name": "two", "sql": "SELECT 2 AS a", "schema": s, "rows": [{"a": 2}]},
    ]}
    p = tmp_path / "v.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    r = _run("fill", str(p), "one")
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(p.read_text(encoding="utf-8"))
    assert out["vectors"][0]["dsha"] == ref.table_digest(s, [{"a": 1}])["digest"]
    assert "dsha" not in out["vectors"][1]
    assert _run("fill", str(p), "three").returncode == 2
    # a vector's arguments are a non-empty SQL argument list
    out["vectors"][0]["arguments"] = ""
    p.write_text(json.dumps(out), encoding="utf-8")
    r = _run("check", str(p))
    assert r.returncode == 1 and "FAIL one: arguments" in r.stdout


@pytest.mark.skipif(not os.path.exists(GOLDEN), reason="no golden vectors")
def test_golden_vectors_check():
    r = _run("check", GOLDEN)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed")
