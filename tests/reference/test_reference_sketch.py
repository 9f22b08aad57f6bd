"""The reference implementation of SPEC.md §17 (dsha_reference_sketch.py) against known answers, its own rules and
the golden file tests/golden/vectors-sketch.json."""
import hashlib
import json
import re
import os
import random
import struct

import pytest

import dsha_reference as ref
import dsha_reference_sketch as sk

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
SCHEMA = 'struct<"id":int,"m":map<string,int>,"s":string>'


def random_rows(rng, n):
    return [{"id": rng.randrange(6), "s": rng.choice([None, "", "a", "bc"]),
             "m": rng.choice([None, [], [["x", rng.randrange(3)]], [["y", 1], ["x", None]]])} for _ in range(n)]


def random_items(rng, d, counts=(-6, -4, -3, -2, -1, 1, 2, 3, 4, 6)):
    return [(rng.randbytes(16), rng.choice(counts)) for _ in range(d)]


def smallest_size_at_least(x):
    k = 1
    while not (sk.allowed_size(k) and k >= x):
        k += 1
    return k


# -- §17.2 ----------------------------------------------------------------------------------------------------

def test_mix_is_splitmix64():
    # SplitMix64 seeded with 0: its first output is mix(0 + G) = 0xE220A8397B1DCDAF (published test value).
    assert sk.mix(sk.G) == 0xE220A8397B1DCDAF
    state, out = 1234567, []
    for _ in range(3):
        state = (state + sk.G) % (1 << 64)
        out.append(sk.mix(state))
    assert out == [6457827717110365317, 3203168211198807973, 9817491932198370423]


def test_cell_indices_and_check_follow_the_formulas():
    x16 = bytes(range(16))
    lo, hi = int.from_bytes(x16[:8], "little"), int.from_bytes(x16[8:], "little")
    seed = (lo ^ (hi * sk.G)) % (1 << 64)
    words = [sk.mix((seed + (j + 1) * sk.G) % (1 << 64)) for j in range(3)]
    for m in (1, 3, 12, 1 << 24):
        assert sk.cell_indices(x16, m) == [w % m for w in words]
    assert sk.check_word(x16) == sk.mix(hi ^ sk.mix(lo ^ 0xD1B54A32D192ED03))


def test_allowed_sizes():
    allowed = [k for k in range(1, 100) if sk.allowed_size(k)]
    assert allowed == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96]
    assert sk.allowed_size(1 << 24) and sk.allowed_size(3 << 22)
    assert not sk.allowed_size(3 << 23) and not sk.allowed_size(0) and not sk.allowed_size(1 << 25)
    assert sk.fold_sizes(48) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 48]
    assert sk.fold_sizes(64) == [1, 2, 4, 8, 16, 32, 64]


def test_cells_add_three_times_and_hold_exact_multiples():
    x16 = bytes.fromhex("afa755c26f358fe81d77abaf7c4fd88e")  # golden vector `int`
    x = int.from_bytes(x16, "little")
    cells = sk.sketch_cells([(x16, 5)], 1)
    assert cells == [[15, 15 * x, (15 * sk.check_word(x16)) % (1 << 64)]]
    cells = sk.sketch_cells([(x16, -2)], 1)
    assert cells == [[(1 << 64) - 6, (1 << 192) - 6 * x, (-6 * sk.check_word(x16)) % (1 << 64)]]


def test_sketch_invariants_counts_and_sums():
    rng = random.Random(1)
    rows = random_rows(rng, 40)
    parsed = sk.parse_sketch(sk.sketch_bytes(SCHEMA, rows, 24))
    digest = ref.table_digest(SCHEMA, rows)
    assert parsed["rows"] == 40 and parsed["sum"] == int(digest["content_sum"], 16)
    assert sum(c[0] for c in parsed["cells"]) == 3 * 40
    assert sum(c[1] for c in parsed["cells"]) % (1 << 128) == 3 * parsed["sum"] % (1 << 128)
    assert sum(c[1] for c in parsed["cells"]) == 3 * sum(int.from_bytes(bytes.fromhex(h), "little")
                                                          for h in digest["row_digests"])


def test_byte_layout_of_a_one_row_sketch():
    schema = b'struct<"a":int>'
    sd = hashlib.sha256(schema).digest()
    x16 = bytes.fromhex("afa755c26f358fe81d77abaf7c4fd88e")
    x = int.from_bytes(x16, "little")
    phi = sk.mix(sk.mix(sk.G) | 1) >> 32  # one column, v_0 = 1: φ = mix(K_0·1) >> 32
    head = b"\x81\xb4\xf5\x01" + struct.pack("<I", 32) + sd + struct.pack("<Q", 1) + x16 + struct.pack("<I", 1)
    cell = struct.pack("<Q", 3) + (3 * x).to_bytes(24, "little") + struct.pack("<Q", 3 * sk.check_word(x16) % (1 << 64))
    tail = struct.pack("<I", 1) + struct.pack("<I", 1) + b"a" + sd + x16 + struct.pack("<I", len(schema)) + schema
    filter_field = struct.pack("<Q", 3 * phi)
    assert sk.sketch_bytes('struct<"a":int>', [{"a": 1}], 1) == b"DSHK\x02" + head + cell + filter_field + tail
    assert sk.sketch_bytes('struct<"a":int>', [{"a": 1}], 1, filters=False) == b"DSHK\x01" + head + cell + tail
    for filters, cell_bytes in ((True, 48), (False, 40)):
        empty = sk.sketch_bytes('struct<"a":int>', [], 6, columns=False, filters=filters)
        assert len(empty) == 4 + 1 + 4 + 4 + 32 + 8 + 16 + 4 + 6 * cell_bytes + 4 + 4 + 15


# -- §17.2.1 filter words ------------------------------------------------------------------------------------------

ALL_TYPES = ('struct<"a_bool":boolean,"b_tiny":tinyint,"c_small":smallint,"d_int":int,"e_big":bigint,'
             '"f_float":float,"g_double":double,"h_dec":decimal(10,2),"i_dec18":decimal(18,0),'
             '"j_dec38":decimal(38,10),"k_str":string,"l_coll":string collate UTF8_LCASE,"m_bin":binary,'
             '"n_date":date,"o_ts":timestamp,"p_ntz":timestamp_ntz,"q_time":time(6),"r_ntz9":timestamp_ntz(9),'
             '"s_ltz7":timestamp_ltz(7),"t_cal":interval,"u_ym":interval year to month,"v_dt":interval day to second,'
             '"w_void":void,"x_var":variant,"y_arr":array<int>,"z_map":map<string,int>,'
             '"zz_struct":struct<"p":int,"q":array<string>>>')
NAN_WITH_PAYLOAD = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000123))[0]


def random_value(rng, name):
    """A random JSON value (SPEC §10) for the column `name` of ALL_TYPES."""
    i64 = (-(1 << 63), -1, 0, 1, (1 << 63) - 1, rng.randrange(-(1 << 63), 1 << 63))
    dec = rng.randrange(-10 ** 10 + 1, 10 ** 10)
    return {
        "a_bool": rng.choice([True, False]),
        "b_tiny": rng.choice([-128, -1, 0, 127, rng.randrange(-128, 128)]),
        "c_small": rng.choice([-32768, -2, 32767, rng.randrange(-32768, 32768)]),
        "d_int": rng.choice([-(1 << 31), -1, (1 << 31) - 1, rng.randrange(-(1 << 31), 1 << 31)]),
        "e_big": rng.choice(i64),
        "f_float": rng.choice([1.5, -1.0, "NaN", NAN_WITH_PAYLOAD, "-0.0", 0.0, "-Infinity", rng.uniform(-1e6, 1e6)]),
        "g_double": rng.choice([2.25, -1.0, "NaN", NAN_WITH_PAYLOAD, "-0.0", "Infinity", rng.uniform(-1e300, 1e300)]),
        "h_dec": f"{'-' if dec < 0 else ''}{abs(dec) // 100}.{abs(dec) % 100:02d}",
        "i_dec18": rng.choice(["-999999999999999999", "0", str(rng.randrange(-10 ** 17, 10 ** 17))]),
        "j_dec38": rng.choice(["1.5", "-12345678901234567890.0123456789"]),
        "k_str": rng.choice(["", "a", "héllo 🌍", "ab  ", "x" * rng.randrange(300)]),
        "l_coll": rng.choice(["Abc", "é"]),
        "m_bin": rng.randbytes(rng.randrange(5)).hex(),
        "n_date": rng.randrange(-(1 << 31), 1 << 31),
        "o_ts": rng.choice(i64),
        "p_ntz": rng.choice(i64),
        "q_time": rng.randrange(86_400_000_000_000),
        "r_ntz9": [rng.choice(i64), rng.randrange(1000)],
        "s_ltz7": [rng.choice(i64), rng.randrange(1000)],
        "t_cal": [rng.randrange(-5, 5), rng.randrange(-5, 5), rng.choice(i64)],
        "u_ym": rng.randrange(-(1 << 31), 1 << 31),
        "v_dt": rng.choice(i64),
        "w_void": None,
        "x_var": {"variant": rng.choice(['null', '1', '"x"', '[1,2.50,{"a":null}]', '{"k":true,"d":-1.0E3}'])},
        "y_arr": rng.choice([[], [1, None]]),
        "z_map": rng.choice([[], [["x", 1], ["y", None]]]),
        "zz_struct": rng.choice([{"p": None, "q": None}, {"p": 7, "q": ["a", None]}]),
    }[name]


def random_all_types_row(rng, null_share=0.2):
    t = ref.parse_schema(ALL_TYPES)
    return {n: None if rng.random() < null_share else random_value(rng, n) for n, _ in t.fields}


# A second route to v_i (SPEC §17.2.1): walk the row's canonical encoding (SPEC §3, from the reference's encoder)
# slot by slot, and read each top-level column's word from its bytes.
FIXED_LAYOUT = {"boolean": 1, "tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8,
                "date": 4, "timestamp": 8, "timestamp_ntz": 8, "time": 8, "interval_ym": 4, "interval_dt": 8}
VARIANT_FIXED = {0: 0, 1: 1, 2: 8, 3: 4, 4: 8, 6: 4, 7: 8, 8: 8, 11: 16}  # tag -> layout bytes (SPEC §3.6)


def u32_at(data, pos):
    return struct.unpack_from("<I", data, pos)[0]


def variant_end(data, pos):
    tag, pos = data[pos], pos + 1
    if tag in VARIANT_FIXED:
        return pos + VARIANT_FIXED[tag]
    if tag in (5, 9, 10):
        return pos + 4 + u32_at(data, pos)
    if tag == 12:
        end = pos + 4
        for _ in range(u32_at(data, pos)):
            end = variant_end(data, end)
        return end
    assert tag == 13
    return pos + 4 + 16


def layout_end(t, data, pos):
    """The end of the layout of a present value of type t starting at data[pos]."""
    k = t.kind
    if k in FIXED_LAYOUT:
        return pos + FIXED_LAYOUT[k]
    if k == "decimal":
        return pos + (8 if t.precision <= 18 else 16)
    if k in ("string", "collated", "binary"):
        return pos + 4 + u32_at(data, pos)
    if k == "timestamp_nanos":
        return pos + 10
    if k == "interval":
        return pos + 16
    if k == "map":
        return pos + 4 + 16
    if k == "variant":
        return variant_end(data, pos)
    if k == "array":
        end = pos + 4
        for _ in range(u32_at(data, pos)):
            end = slot_end(t.element, data, end)
        return end
    assert k == "struct", k
    for _, ft in t.fields:
        pos = slot_end(ft, data, pos)
    return pos


def slot_end(t, data, pos):
    return pos + 1 if data[pos] == 0 else layout_end(t, data, pos + 1)


def words_from_encoding(t, data):
    """The v_i of the columns of a row of schema t from its encoded column slots (SPEC §3.1, §3.5)."""
    words, pos = [], 0
    for _, ft in t.fields:
        end = slot_end(ft, data, pos)
        layout = data[pos + 1:end]
        if data[pos] == 0:
            words.append(0x6A09E667F3BCC908)
        elif ft.kind in ("string", "collated", "binary"):
            words.append(len(layout) - 4)
        elif len(layout) in (1, 2, 4, 8) and (ft.kind in FIXED_LAYOUT or ft.kind == "decimal"):
            words.append(int.from_bytes(layout, "little", signed=True) % (1 << 64))
        else:
            words.append(1)
        pos = end
    assert pos == len(data)
    return words


def phi_from_encoding(t, row):
    total = sum((sk.mix((i + 1) * sk.G % (1 << 64)) | 1) * v
                for i, v in enumerate(words_from_encoding(t, ref.row_bytes(t, row))))
    return sk.mix(total % (1 << 64)) >> 32


def test_value_words_of_every_type_class():
    t = dict(ref.parse_schema(ALL_TYPES).fields)
    M = 1 << 64
    cases = [
        ("a_bool", True, 1), ("a_bool", False, 0),
        ("b_tiny", -1, M - 1), ("b_tiny", 127, 127), ("c_small", -2, M - 2),
        ("d_int", -(1 << 31), M - (1 << 31)), ("e_big", -(1 << 63), 1 << 63), ("e_big", 5, 5),
        ("f_float", -1.0, 0xFFFFFFFFBF800000), ("f_float", 1.5, 0x3FC00000), ("f_float", "NaN", 0x7FC00000),
        ("f_float", NAN_WITH_PAYLOAD, 0x7FC00000), ("f_float", "-0.0", 0), ("f_float", "-Infinity", 0xFFFFFFFFFF800000),
        ("g_double", -1.0, 0xBFF0000000000000), ("g_double", "NaN", 0x7FF8000000000000),
        ("g_double", NAN_WITH_PAYLOAD, 0x7FF8000000000000), ("g_double", "-0.0", 0),
        ("h_dec", "-3.01", M - 301), ("h_dec", "10.5", 1050),
        ("i_dec18", "-999999999999999999", M - 999999999999999999),
        ("j_dec38", "1.5", 1), ("j_dec38", "0", 1),
        ("k_str", "", 0), ("k_str", "héllo 🌍", 11), ("l_coll", "Abc", 3), ("m_bin", "00ff10", 3), ("m_bin", "", 0),
        ("n_date", -1, M - 1), ("o_ts", 1709210096789012, 1709210096789012), ("p_ntz", -2, M - 2),
        ("q_time", 45296123456000, 45296123456000), ("r_ntz9", [1704103200123456, 789], 1), ("s_ltz7", [-1, 0], 1),
        ("t_cal", [14, 3, 14706000007], 1), ("u_ym", -14, M - 14), ("v_dt", 273906000007, 273906000007),
        ("x_var", {"variant": "null"}, 1), ("x_var", {"variant": "7"}, 1), ("y_arr", [], 1), ("z_map", [], 1),
        ("zz_struct", {"p": None, "q": None}, 1),
    ]
    for name, value, word in cases:
        assert sk.value_word(t[name], value) == word, (name, value)
    for name in t:  # void included: its values are always null
        assert sk.value_word(t[name], None) == 0x6A09E667F3BCC908
    with pytest.raises(ValueError):
        sk.value_word(t["w_void"], 1)
    with pytest.raises(ValueError):
        sk.value_word(t["b_tiny"], 128)
    assert sk.value_word(ref.parse_schema('struct<"s":string collate UNICODE_CI_AI_RTRIM>').fields[0][1], "ab  ") == 4


def test_filter_word_matches_a_second_computation_from_the_encoded_row():
    rng = random.Random(20)
    t = ref.parse_schema(ALL_TYPES)
    for k in range(300):
        row = random_all_types_row(rng, null_share=[0.0, 0.2, 0.9][k % 3])
        phi = sk.filter_word(t, row)
        assert phi == phi_from_encoding(t, row) and 0 <= phi < 1 << 32
    rows = random_rows(rng, 50)  # and the schema of the other tests, through the schema-string entry point
    t2 = ref.parse_schema(SCHEMA)
    assert sk.row_filter_words(SCHEMA, rows) == [phi_from_encoding(t2, r) for r in rows]
    with open(os.path.join(GOLDEN, "vectors.json"), encoding="utf-8") as f:
        for v in json.load(f)["vectors"]:
            t3 = ref.parse_schema(v["schema"])
            assert [sk.filter_word(t3, r) for r in v["rows"]] == [phi_from_encoding(t3, r) for r in v["rows"]]


def test_filter_word_formula_by_hand():
    # Two columns, in canonical order a then b: φ = mix(K_0·v_0 + K_1·v_1 mod 2^64) >> 32.
    K0, K1 = sk.mix(sk.G) | 1, sk.mix(2 * sk.G % (1 << 64)) | 1
    assert sk.column_key(0) == K0 and sk.column_key(1) == K1 and K0 % 2 == K1 % 2 == 1
    t = ref.parse_schema('struct<"b":string,"a":bigint>')
    assert sk.filter_word(t, {"a": -3, "b": "xyz"}) == sk.mix((K0 * ((1 << 64) - 3) + K1 * 3) % (1 << 64)) >> 32
    null = 0x6A09E667F3BCC908
    assert sk.filter_word(t, {"a": None, "b": None}) == sk.mix((K0 + K1) * null % (1 << 64)) >> 32
    # Each column has its own K_i: swapping two values between columns changes φ.
    t2 = ref.parse_schema('struct<"a":bigint,"b":bigint>')
    assert sk.filter_word(t2, {"a": 1, "b": 2}) != sk.filter_word(t2, {"a": 2, "b": 1})


def test_filter_word_of_a_row_of_no_columns_is_zero():
    assert sk.mix(0) == 0
    assert sk.filter_word(ref.DType("struct", fields=[]), {}) == 0


def test_canonically_equal_rows_have_equal_filter_words():
    t = ref.parse_schema('struct<"d":double,"f":float,"m":map<string,int>,"s":string,"x":int>')
    pairs = [
        ({"d": "-0.0", "f": "-0.0", "m": [["a", 1], ["b", 2]], "s": "é", "x": None},
         {"d": 0.0, "f": 0.0, "m": [["b", 2], ["a", 1]], "s": "é", "x": None}),
        ({"d": "NaN", "f": "NaN", "m": None, "s": None, "x": 1},
         {"d": NAN_WITH_PAYLOAD, "f": NAN_WITH_PAYLOAD, "m": None, "s": None, "x": 1}),
        ({"d": 1, "f": 2, "m": [], "s": "", "x": -1}, {"d": 1.0, "f": 2.0, "m": [], "s": "", "x": -1}),
    ]
    for a, b in pairs:
        assert ref.row_bytes(t, a) == ref.row_bytes(t, b)
        assert sk.filter_word(t, a) == sk.filter_word(t, b)
    # Null versus empty versus zero are told apart.
    words = {sk.filter_word(t, {"d": d, "f": None, "m": None, "s": s, "x": None})
             for d, s in ((None, None), (0.0, None), (None, ""), (0.0, ""))}
    assert len(words) == 4


def test_sketch_filter_fields_hold_the_sum_of_filter_words():
    rng = random.Random(21)
    rows = random_rows(rng, 40)
    parsed = sk.parse_sketch(sk.sketch_bytes(SCHEMA, rows, 1))
    assert parsed["version"] == 2 and parsed["filters"]
    assert parsed["cells"][0][3] == 3 * sum(sk.row_filter_words(SCHEMA, rows)) % (1 << 64)
    x16, phi = rng.randbytes(16), 0xFFFFFFFF
    assert sk.sketch_cells([(x16, -2, phi)], 1, filters=True)[0][3] == -6 * phi % (1 << 64)
    with pytest.raises(ValueError, match="u32"):
        sk.sketch_cells([(x16, 1, 1 << 32)], 1, filters=True)


# -- §17.1 columns --------------------------------------------------------------------------------------------

def test_column_digests_finalise_to_the_one_column_digest():
    rng = random.Random(2)
    rows = random_rows(rng, 12)
    parsed = sk.parse_sketch(sk.sketch_bytes(SCHEMA, rows, 4))
    assert [c[0] for c in parsed["columns"]] == ["id", "m", "s"]
    types = dict(ref.parse_schema(SCHEMA).fields)
    for name, sd, total in parsed["columns"]:
        one = f'struct<"{name}":{types[name].render()}>'
        whole = ref.table_digest(one, [{name: r[name]} for r in rows])
        assert sd.hex() == whole["schema_digest"]
        assert ref.digest_string(ref.finalise(sd, parsed["rows"], total)) == whole["digest"]


def test_column_digests_are_multisets_of_values():
    with open(os.path.join(GOLDEN, "vectors.json"), encoding="utf-8") as f:
        vectors = {v["name"]: v for v in json.load(f)["vectors"]}
    a, b = vectors["table_without_duplicates"], vectors["table_swapped_values"]
    pa = sk.parse_sketch(sk.sketch_bytes(a["schema"], a["rows"], 6))
    pb = sk.parse_sketch(sk.sketch_bytes(b["schema"], b["rows"], 6))
    assert pa["columns"] == pb["columns"] and pa["cells"] != pb["cells"] and pa["sum"] != pb["sum"]


# -- §17.3 ----------------------------------------------------------------------------------------------------

def test_fold_equals_direct_computation_at_the_smaller_size():
    rng = random.Random(3)
    items = random_items(rng, 60)
    big = sk.sketch_cells(items, 96)
    for k in sk.fold_sizes(96):
        assert sk.fold(big, k) == sk.sketch_cells(items, k)
    rows = random_rows(rng, 30)
    s48 = sk.sketch_bytes(SCHEMA, rows, 48)
    for k in sk.fold_sizes(48):
        assert sk.fold_sketch(s48, k) == sk.sketch_bytes(SCHEMA, rows, k)
    with pytest.raises(sk.SketchError, match="does not divide"):
        sk.fold(big, 64)


def test_merge_of_a_split_equals_the_whole():
    rng = random.Random(4)
    rows = random_rows(rng, 50)
    for m in (1, 6, 16):
        for columns in (True, False):
            parts = [rows[:7], rows[7:7], rows[7:31], rows[31:]]
            merged = sk.sketch_bytes(SCHEMA, parts[0], m, columns)
            for p in parts[1:]:
                merged = sk.merge_sketches(sk.sketch_bytes(SCHEMA, p, m, columns), merged)
            assert merged == sk.sketch_bytes(SCHEMA, rows, m, columns)
            assert sk.sketch_bytes(SCHEMA, list(reversed(rows)), m, columns) == merged


def test_merge_and_subtract_refuse_other_schemas_and_sizes():
    a = sk.sketch_bytes('struct<"a":int>', [{"a": 1}], 4)
    b = sk.sketch_bytes('struct<"a":bigint>', [{"a": 1}], 4)
    for op in (sk.merge_sketches, sk.subtract_sketches):
        with pytest.raises(sk.SketchError) as e:
            op(a, b)
        assert 'struct<"a":int>' in str(e.value) and 'struct<"a":bigint>' in str(e.value)
    with pytest.raises(sk.SketchError, match="4 and 8 cells"):
        sk.merge_sketches(a, sk.sketch_bytes('struct<"a":int>', [], 8))


def test_subtract_folds_to_the_gcd():
    rng = random.Random(5)
    common = random_items(rng, 20, counts=(1, 2))
    left = common + [(rng.randbytes(16), 3)]
    right = common + [(rng.randbytes(16), 1)]
    diff = sk.subtract(sk.sketch_cells(left, 12), sk.sketch_cells(right, 8))
    assert len(diff) == 4
    assert diff == sk.subtract(sk.sketch_cells(left, 4), sk.sketch_cells(right, 4))
    ok, got = sk.decode(diff)
    assert ok and got == {left[-1][0]: 3, right[-1][0]: -1}


# -- §17.4 ----------------------------------------------------------------------------------------------------

def truth(items):
    out = {}
    for x, c in items:
        out[x] = out.get(x, 0) + c
    return {x: c for x, c in out.items() if c}


def test_decode_random_multisets_exact_whenever_it_succeeds_and_mostly_succeeds_at_2d():
    rng = random.Random(6)
    trials = successes = 0
    for _ in range(24):
        d = rng.randrange(50, 501)
        m = smallest_size_at_least(2 * d)
        diff_items = random_items(rng, d)
        # The difference of two sketches: common rows cancel, positive counts on the left, negative on the right.
        common = random_items(rng, rng.randrange(0, 200), counts=(1, 2, 5))
        left = common + [(x, c) for x, c in diff_items if c > 0]
        right = common + [(x, -c) for x, c in diff_items if c < 0]
        diff = sk.subtract(sk.sketch_cells(left, m), sk.sketch_cells(right, m))
        assert diff == sk.sketch_cells(diff_items, m)
        ok, got = sk.decode(diff)
        trials += 1
        if ok:
            successes += 1
            assert got == truth(diff_items)
        else:
            assert any(c != [0, 0, 0] for c in diff)
    assert successes >= trials - 2, f"{successes}/{trials} decoded at m >= 2d"


def test_decode_below_the_threshold_is_still_exact_when_it_succeeds():
    rng = random.Random(7)
    outcomes = set()
    for _ in range(60):
        d = rng.randrange(20, 120)
        m = smallest_size_at_least(d)  # m/d between 1 and 1.5: often fails
        items = random_items(rng, d)
        ok, got = sk.decode(sk.sketch_cells(items, m))
        outcomes.add(ok)
        if ok:
            assert got == truth(items)
    assert outcomes == {True, False}


def test_repeated_digests_and_coinciding_cells_decode_with_their_multiplicity():
    rng = random.Random(8)
    seen_mu = set()
    for _ in range(300):
        x16 = rng.randbytes(16)
        for m in (1, 2, 3, 4):
            mu = max(sk.cell_indices(x16, m).count(i) for i in range(m))
            seen_mu.add(mu)
            for c in (2, -4, 6, 7):
                ok, got = sk.decode(sk.sketch_cells([(x16, c)], m))
                assert ok and got == {x16: c}
    assert seen_mu == {1, 2, 3}


def test_the_same_digest_on_both_sides_cancels_and_duplicates_do_not():
    rng = random.Random(9)
    x, y = rng.randbytes(16), rng.randbytes(16)
    left = sk.sketch_cells([(x, 3), (y, 1)], 6)
    right = sk.sketch_cells([(x, 1), (y, 1)], 6)
    ok, got = sk.decode(sk.subtract(left, right))
    assert ok and got == {x: 2}
    assert sk.decode(sk.subtract(left, left)) == (True, {})
    assert sk.decode_smallest(sk.subtract(left, left)) == (True, {}, 1)


def peel_in_order(cells, order_rng):
    """An independent peeling loop: sweeps the cells in a random order until a sweep peels nothing."""
    cells = [list(c) for c in cells]
    found = {}
    while True:
        progress = False
        order = list(range(len(cells)))
        order_rng.shuffle(order)
        for i in order:
            hit = sk.pure_digest(cells, i)
            if hit:
                x16, c = hit
                sk.add_digest(cells, x16, -c)
                found[x16] = found.get(x16, 0) + c
                progress = True
        if not progress:
            break
    return all(c == [0, 0, 0] for c in cells), {x: c for x, c in found.items() if c}


def test_the_order_of_peeling_does_not_change_the_result():
    rng = random.Random(10)
    for _ in range(20):
        d = rng.randrange(10, 80)
        m = smallest_size_at_least(rng.uniform(1.1, 2.0) * d)
        cells = sk.sketch_cells(random_items(rng, d), m)
        ok, got = sk.decode(cells)
        for k in range(3):
            ok2, got2 = peel_in_order(cells, random.Random(k))
            assert ok2 == ok
            if ok:
                assert got2 == got


def test_decode_smallest_uses_the_smallest_size_that_decodes():
    rng = random.Random(11)
    for _ in range(15):
        d = rng.randrange(1, 40)
        items = random_items(rng, d)
        cells = sk.sketch_cells(items, 192)
        ok, got, size = sk.decode_smallest(cells)
        if not ok:
            assert size is None
            continue
        assert got == truth(items) and 192 % size == 0
        for k in sk.fold_sizes(192):
            if k < size:
                assert not sk.decode(sk.fold(cells, k))[0]
        assert sk.decode(sk.fold(cells, size)) == (True, got)


def test_estimate_of_d_from_zero_cells():
    rng = random.Random(12)
    for d in (50, 200):
        m = 3 * 256
        est = sk.estimate_d(sk.sketch_cells(random_items(rng, d), m))
        assert 0.75 * d < est < 1.25 * d
    assert sk.estimate_d(sk.zero_cells(8)) == 0


def random_filter_items(rng, d, counts=(-3, -2, -1, 1, 2, 3)):
    """(x16, c, φ) for d distinct digests with random filter words."""
    return [(rng.randbytes(16), rng.choice(counts), rng.randrange(1 << 32)) for _ in range(d)]


def test_decode_recovers_each_digests_filter_word():
    rng = random.Random(22)
    successes = 0
    for _ in range(40):
        d = rng.randrange(1, 200)
        m = smallest_size_at_least(rng.choice([1.5, 2.0, 3.0]) * d)
        items = random_filter_items(rng, d)
        phis = {x: phi for x, _, phi in items}
        # Duplicates: a digest on both sides with more occurrences on one; common rows that cancel.
        common = [(x, rng.choice((1, 2, 3)), phi) for x, _, phi in rng.sample(items, d // 2)]
        common += [(x, 1, phi) for x, _, phi in random_filter_items(rng, rng.randrange(50))]
        left = common + [(x, c, phi) for x, c, phi in items if c > 0]
        right = common + [(x, -c, phi) for x, c, phi in items if c < 0]
        diff = sk.subtract(sk.sketch_cells(left, m, filters=True), sk.sketch_cells(right, 2 * m, filters=True))
        assert diff == sk.sketch_cells(items, m, filters=True)
        ok, got, filters = sk.decode_with_filters(diff)
        assert (ok, got) == sk.decode([c[:3] for c in diff])
        if ok:
            successes += 1
            assert got == truth([(x, c) for x, c, _ in items])
            assert filters == {x: phis[x] for x in got}
        else:
            assert filters is None
    assert successes >= 30


def test_filter_words_with_coinciding_cells():
    rng = random.Random(23)
    seen_mu = set()
    for _ in range(300):
        x16, phi = rng.randbytes(16), rng.choice([0, 1, 0xFFFFFFFF, rng.randrange(1 << 32)])
        for m in (1, 2, 3, 4):
            seen_mu.add(max(sk.cell_indices(x16, m).count(i) for i in range(m)))
            for c in (1, -1, 2, -2, 3, -3):
                cells = sk.sketch_cells([(x16, c, phi)], m, filters=True)
                assert sk.decode_with_filters(cells) == (True, {x16: c}, {x16: phi})
    assert seen_mu == {1, 2, 3}


def test_decoded_filter_words_of_tables_are_their_rows_filter_words():
    rng = random.Random(24)
    for m in (6, 12, 48):
        left, right = random_rows(rng, 30), random_rows(rng, 25)
        cells = sk.subtract_sketches(sk.sketch_bytes(SCHEMA, left, m), sk.sketch_bytes(SCHEMA, right, m))
        ok, got, size, filters = sk.decode_smallest_with_filters(cells)
        expected = {d: phi for d, phi in zip(sk.row_digests(SCHEMA, left + right),
                                             sk.row_filter_words(SCHEMA, left + right))}
        if ok:
            assert filters == {x: expected[x] for x in got}
            assert (ok, got, size) == sk.decode_smallest(cells)


def test_a_corrupted_filter_invalidates_filter_words_but_not_the_entries():
    rng = random.Random(25)
    tried = 0
    for _ in range(30):
        d = rng.randrange(1, 60)
        items = random_filter_items(rng, d)
        cells = sk.sketch_cells(items, smallest_size_at_least(2.5 * d), filters=True)
        ok, got, filters = sk.decode_with_filters(cells)
        if not ok:
            continue
        tried += 1
        # A change that is not a multiple of 3: the filters left after peeling cannot all be zero.
        for delta in (1, -1, 2, 5, (1 << 40) + 1):
            bad = [list(c) for c in cells]
            i = rng.randrange(len(bad))
            bad[i][3] = (bad[i][3] + delta) % (1 << 64)
            assert sk.decode_with_filters(bad) == (True, got, None)
            assert sk.decode_smallest_with_filters(bad)[:3] == sk.decode_smallest(cells)
    assert tried >= 20
    # A pure cell whose F / C is not a u32 (negative, 2^32, inexact): φ unknown, filters invalid.
    x16 = rng.randbytes(16)
    for f in (-3, 3 << 32, 4):
        cell = sk.sketch_cells([(x16, 1)], 1)[0] + [f % (1 << 64)]
        assert sk.decode_with_filters([cell]) == (True, {x16: 1}, None)


def test_no_filter_words_decodes_the_same_without_filters():
    rng = random.Random(26)
    for _ in range(30):
        d = rng.randrange(1, 80)
        items = random_filter_items(rng, d)
        m = smallest_size_at_least(rng.uniform(0.8, 2.5) * d)
        with_f = sk.sketch_cells(items, m, filters=True)
        without = sk.sketch_cells([(x, c) for x, c, _ in items], m)
        assert without == [c[:3] for c in with_f]
        ok, got, filters = sk.decode_with_filters(without)
        assert filters is None and (ok, got) == sk.decode(with_f)
        assert sk.decode_smallest_with_filters(without)[3] is None


# -- parsing --------------------------------------------------------------------------------------------------

def good_sketch():
    return sk.sketch_bytes('struct<"a":int,"b":string>', [{"a": 1, "b": "x"}, {"a": 2, "b": None}], 3)


def test_parse_round_trip():
    data = good_sketch()
    p = sk.parse_sketch(data)
    assert p["schema"] == 'struct<"a":int,"b":string>' and p["m"] == 3 and p["rows"] == 2
    assert sk.serialise_sketch(p["schema"], p["rows"], p["sum"], p["cells"], p["columns"]) == data


def with_cell_count(data, m):
    at = 4 + 1 + 4 + 4 + 32 + 8 + 16
    return data[:at] + struct.pack("<I", m) + data[at + 4:]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: b"DSHS" + d[4:], "bad magic"),
    (lambda d: d[:4] + b"\x03" + d[5:], "format version 3"),
    (lambda d: d[:4] + b"\x00" + d[5:], "format version 0"),
    (lambda d: d[:5] + b"\x90\xb4\xf5\x01" + d[9:], "unknown algorithm code 0x3d5a10"),
    (lambda d: d[:9] + struct.pack("<I", 16) + d[13:], "32 bytes"),
    (lambda d: with_cell_count(d, 5), "cell count 5"),
    (lambda d: with_cell_count(d, 0), "cell count 0"),
    (lambda d: with_cell_count(d, 9), "cell count 9"),
    (lambda d: with_cell_count(d, 3 << 23), "cell count"),
    (lambda d: with_cell_count(d, 6), "truncated"),
    (lambda d: d + b"\x00", "1 bytes after the schema"),
    (lambda d: d[:-1] + b"X", "does not match its digest"),
    (lambda d: d[:13] + bytes(32) + d[45:], "does not match its digest"),
])
def test_parse_errors(mutate, message):
    with pytest.raises(sk.SketchError, match=message):
        sk.parse_sketch(mutate(good_sketch()))


def test_every_truncation_is_an_error():
    data = good_sketch()
    for n in range(len(data)):
        with pytest.raises(sk.SketchError):
            sk.parse_sketch(data[:n])


def test_non_minimal_varint_and_wrong_columns_are_errors():
    data = good_sketch()
    with pytest.raises(sk.SketchError, match="algorithm code"):
        sk.parse_sketch(data[:5] + b"\x81\xb4\xf5\x81\x00" + data[9:])
    p = sk.parse_sketch(data)
    swapped = list(reversed(p["columns"]))
    with pytest.raises(sk.SketchError, match="columns"):
        sk.parse_sketch(sk.serialise_sketch(p["schema"], p["rows"], p["sum"], p["cells"], swapped))
    with pytest.raises(sk.SketchError, match="columns"):
        sk.parse_sketch(sk.serialise_sketch(p["schema"], p["rows"], p["sum"], p["cells"], p["columns"][:1]))


def test_version_2_round_trips_byte_for_byte():
    rng = random.Random(27)
    for m in (1, 3, 16):
        for columns in (True, False):
            data = sk.sketch_bytes(SCHEMA, random_rows(rng, 20), m, columns)
            p = sk.parse_sketch(data)
            assert p["version"] == 2 and p["filters"] and all(len(c) == 4 for c in p["cells"])
            assert sk.serialise_sketch(p["schema"], p["rows"], p["sum"], p["cells"], p["columns"]) == data
            assert sk.merge_sketches(data, sk.sketch_bytes(SCHEMA, [], m, columns)) == data


def v1_by_layout(v2):
    """The version 1 bytes of a version 2 sketch, by the layout (§17.1): version byte 1, each cell's last 8 bytes
    (the filter) dropped."""
    m_at = 4 + 1 + 4 + 4 + 32 + 8 + 16
    m = struct.unpack_from("<I", v2, m_at)[0]
    cells = v2[m_at + 4:m_at + 4 + 48 * m]
    return (b"DSHK\x01" + v2[5:m_at + 4] + b"".join(cells[48 * k:48 * k + 40] for k in range(m))
            + v2[m_at + 4 + 48 * m:])


def test_version_1_is_read_as_a_sketch_without_filter_words():
    rng = random.Random(28)
    for m in (1, 6, 24):
        left, right = random_rows(rng, 25), random_rows(rng, 20)
        v2 = sk.sketch_bytes(SCHEMA, left, m)
        v1 = v1_by_layout(v2)
        assert sk.sketch_bytes(SCHEMA, left, m, filters=False) == v1
        p1, p2 = sk.parse_sketch(v1), sk.parse_sketch(v2)
        assert p1["version"] == 1 and not p1["filters"] and p1["cells"] == [c[:3] for c in p2["cells"]]
        assert {k: p1[k] for k in ("schema", "rows", "sum", "m", "columns")} == \
            {k: p2[k] for k in ("schema", "rows", "sum", "m", "columns")}
        assert sk.serialise_sketch(p1["schema"], p1["rows"], p1["sum"], p1["cells"], p1["columns"]) == v1
        right_v2 = sk.sketch_bytes(SCHEMA, right, m)
        ok2, got2, filters2 = sk.decode_with_filters(sk.subtract_sketches(v2, right_v2))
        for a, b in ((v1, right_v2), (right_v2, v1), (v1, v1_by_layout(right_v2))):
            cells = sk.subtract_sketches(a, b)
            assert all(len(c) == 3 for c in cells)
            ok, got, filters = sk.decode_with_filters(cells)
            assert filters is None
            if a is v1:
                assert (ok, got) == (ok2, got2)
        if ok2:
            assert filters2 is not None


def test_merging_version_1_with_version_2_gives_version_1():
    rng = random.Random(29)
    a, b = random_rows(rng, 15), random_rows(rng, 10)
    for m in (1, 12):
        a1, a2 = sk.sketch_bytes(SCHEMA, a, m, filters=False), sk.sketch_bytes(SCHEMA, a, m)
        b1, b2 = sk.sketch_bytes(SCHEMA, b, m, filters=False), sk.sketch_bytes(SCHEMA, b, m)
        whole1 = sk.sketch_bytes(SCHEMA, a + b, m, filters=False)
        assert sk.merge_sketches(a1, b2) == sk.merge_sketches(a2, b1) == sk.merge_sketches(a1, b1) == whole1
        assert whole1[4] == 1 and sk.parse_sketch(whole1)["filters"] is False
        assert sk.merge_sketches(a2, b2) == sk.sketch_bytes(SCHEMA, a + b, m)
        assert sk.fold_sketch(whole1, 1) == sk.sketch_bytes(SCHEMA, a + b, 1, filters=False)
    with pytest.raises(sk.SketchError, match="column digests"):
        sk.merge_sketches(sk.sketch_bytes(SCHEMA, a, 4, columns=False, filters=False), sk.sketch_bytes(SCHEMA, b, 4))


def test_version_byte_must_match_the_cells():
    data = good_sketch()
    with pytest.raises(sk.SketchError):
        sk.parse_sketch(data[:4] + b"\x01" + data[5:])  # 48-byte cells read as 40-byte ones
    v1 = v1_by_layout(data)
    with pytest.raises(sk.SketchError):
        sk.parse_sketch(v1[:4] + b"\x02" + v1[5:])
    for n in range(len(v1)):
        with pytest.raises(sk.SketchError):
            sk.parse_sketch(v1[:n])


# -- the golden file ------------------------------------------------------------------------------------------

def test_golden_file_recomputes():
    path = os.path.join(GOLDEN, "vectors-sketch.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(GOLDEN, "vectors.json"), encoding="utf-8") as f:
        vectors = {v["name"]: v for v in json.load(f)["vectors"]}
    assert sk.check_doc(doc, vectors) == []
    assert sk.main(["check", path]) == 0


def test_golden_file_covers_every_table_of_vectors_json():
    # SPEC §17.6: the sketch and filter words of every table of vectors.json (every type: booleans, NaN and -0.0,
    # intervals, void, variants, collations, TIME, nanosecond timestamps), in its order; a table left out is reported.
    with open(os.path.join(GOLDEN, "vectors-sketch.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(GOLDEN, "vectors.json"), encoding="utf-8") as f:
        vectors = {v["name"]: v for v in json.load(f)["vectors"]}
    assert [v["name"] for v in doc["sketches"]] == list(vectors) and len(vectors) >= 54
    kinds = {k for v in doc["sketches"] for k in re.findall(r"[a-z_]+", v["schema"])}
    assert {"boolean", "interval", "void", "variant", "collate", "time", "timestamp_ntz"} <= kinds
    assert any("timestamp_ntz(9)" in v["schema"] for v in doc["sketches"])
    nan = next(v for v in doc["sketches"] if v["name"] == "nan")
    assert nan["decode"]["filters_valid"] and len(nan["decode"]["filters"]) == 1
    short = dict(doc, sketches=doc["sketches"][:-1])
    assert "sketches: not every table of vectors.json, in its order (SPEC §17.6)" in sk.check_doc(short, vectors)
    swapped = dict(doc, sketches=[doc["sketches"][1], doc["sketches"][0]] + doc["sketches"][2:])
    assert "sketches: not every table of vectors.json, in its order (SPEC §17.6)" in sk.check_doc(swapped, vectors)


def test_golden_file_examples():
    with open(os.path.join(GOLDEN, "vectors-sketch.json"), encoding="utf-8") as f:
        doc = json.load(f)
    assert len(doc["sketches"]) >= 12 and len(doc["differences"]) >= 6
    diffs = {d["name"]: d for d in doc["differences"]}
    assert list(diffs["duplicates_3_vs_1"]["decode"]["entries"].values()) == [2]
    assert sorted(diffs["right_only_and_changed"]["decode"]["entries"].values()) == [-1, -1, 1]
    assert diffs["identical"]["decode"] == {"success": True, "cells_used": 1, "entries": {}, "filters_valid": True,
                                            "filters": {}}
    assert sorted(diffs["multiplicities"]["decode"]["entries"].values()) == [-6, -1, 2, 4]
    assert diffs["too_large_for_m"]["decode"] == {"success": False, "cells_used": None, "filters_valid": False}
    assert diffs["too_large_for_m"]["decode_at_size"]["success"] is False
    assert diffs["large_enough_at_96"]["decode"]["success"] is True
    assert len(diffs["large_enough_at_96"]["decode"]["entries"]) == 30
    g = diffs["gcd_12_and_8"]
    sizes = [sk.parse_sketch(bytes.fromhex(g[f]))["m"] for f in ("sketch_left", "sketch_right")]
    assert sizes + [g["decode_at_size"]["size"]] == [12, 8, 4]
    for v in doc["sketches"]:
        entries = v["decode"]["entries"]
        digests = ref.table_digest(v["schema"], v["rows"])["row_digests"]
        assert entries == {d: digests.count(d) for d in sorted(set(digests))}
        assert sk.parse_sketch(bytes.fromhex(v["sketch_m1_no_columns"]))["columns"] == []
    assert any(v["rows"] == [] for v in doc["sketches"])
    assert any(len(v["rows"]) > len({json.dumps(r, sort_keys=True) for r in v["rows"]}) for v in doc["sketches"])
    f = doc["fold"]
    s12 = bytes.fromhex(f["sketch_m12"])
    assert sk.fold_sketch(s12, 3).hex() == f["folded_m3"] and sk.fold_sketch(s12, 4).hex() == f["folded_m4"]


def test_golden_file_filter_words_and_version_1():
    with open(os.path.join(GOLDEN, "vectors-sketch.json"), encoding="utf-8") as f:
        doc = json.load(f)
    for v in doc["sketches"]:
        t = ref.parse_schema(v["schema"])
        digests = ref.table_digest(v["schema"], v["rows"])["row_digests"]
        phis = {d: phi_from_encoding(t, r) for d, r in zip(digests, v["rows"])}
        assert v["decode"]["filters_valid"] is True and v["decode"]["filters"] == phis
        assert bytes.fromhex(v["sketch_m6"])[4] == 2 and bytes.fromhex(v["sketch_m1_no_columns"])[4] == 2
    for d in doc["differences"]:
        t = ref.parse_schema(d["schema"])
        rows = d["rows_left"] + d["rows_right"]
        phis = dict(zip(ref.table_digest(d["schema"], rows)["row_digests"], (phi_from_encoding(t, r) for r in rows)))
        for k in ("decode", "decode_at_size"):
            assert d[k]["filters_valid"] is d[k]["success"]
            if d[k]["success"]:
                assert d[k]["filters"] == {x: phis[x] for x in d[k]["entries"]}
            else:
                assert "filters" not in d[k]
    assert {v["name"] for v in doc["version1"]} >= {"table_with_duplicates", "table_empty"}
    for v in doc["version1"]:
        s1 = bytes.fromhex(v["sketch_m6"])
        assert s1[4] == 1 and len(s1) == len(sk.sketch_bytes(v["schema"], v["rows"], 6)) - 6 * 8
        assert s1 == v1_by_layout(sk.sketch_bytes(v["schema"], v["rows"], 6))
        assert bytes.fromhex(v["merged_with_v2"])[4] == 1
        assert v["decode"]["filters_valid"] is False and "filters" not in v["decode"]
        digests = ref.table_digest(v["schema"], v["rows"])["row_digests"]
        assert v["decode"]["entries"] == {d: digests.count(d) for d in sorted(set(digests))}


def test_check_reports_changed_filter_fields_and_version_1_vectors():
    with open(os.path.join(GOLDEN, "vectors-sketch.json"), encoding="utf-8") as f:
        text = f.read()
    mutations = [
        lambda d: d["sketches"][0]["decode"]["filters"].update({k: v + 1 for k, v in
                                                                d["sketches"][0]["decode"]["filters"].items()}),
        lambda d: d["differences"][0]["decode_at_size"].update({"filters_valid": False}),
        lambda d: d["differences"][0]["decode"].pop("filters"),
        lambda d: d["version1"][1].update({"sketch_m6": d["sketches"][13]["sketch_m6"]}),
        lambda d: d["version1"][1]["decode"].update({"filters_valid": True}),
        lambda d: d["version1"][0].update({"merged_with_v2": d["version1"][0]["sketch_m6"]}),
        lambda d: d.pop("version1"),
    ]
    for mutate in mutations:
        doc = json.loads(text)
        mutate(doc)
        assert sk.check_doc(doc) != []


def test_filter_word_of_a_row_present_2_to_the_31_times_or_more_is_unknown():
    # §17.4: below |C| = 2^31, C·φ cannot wrap around 2^64; at c = 2^33 and φ = 2^31 + 5 it does (2^64 + 5·2^33), and
    # a division taken as exact would give φ = 5. The filter words are then not valid; the entries are unchanged.
    x = bytes(range(16))
    for c, valid in ((1 << 30, True), ((1 << 31) - 1, True), (1 << 31, False), (1 << 33, False)):
        cells = sk.sketch_cells([(x, c, (1 << 31) + 5)], 6, filters=True)
        ok, entries, filters = sk.decode_with_filters(cells)
        assert ok and entries == {x: c}
        assert (filters == {x: (1 << 31) + 5}) if valid else filters is None, c
