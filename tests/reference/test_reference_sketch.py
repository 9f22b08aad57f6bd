"""The reference implementation of SPEC.md §17 (dsha_reference_sketch.py) against known answers, its own rules and
the golden file tests/golden/vectors-sketch.json."""
import hashlib
import json
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
    data = sk.sketch_bytes('struct<"a":int>', [{"a": 1}], 1, columns=True)
    schema = b'struct<"a":int>'
    sd = hashlib.sha256(schema).digest()
    x16 = bytes.fromhex("afa755c26f358fe81d77abaf7c4fd88e")
    x = int.from_bytes(x16, "little")
    expected = (b"DSHK\x01\x81\xb4\xf5\x01" + struct.pack("<I", 32) + sd + struct.pack("<Q", 1) + x16
                + struct.pack("<I", 1) + struct.pack("<Q", 3) + (3 * x).to_bytes(24, "little")
                + struct.pack("<Q", 3 * sk.check_word(x16) % (1 << 64))
                + struct.pack("<I", 1) + struct.pack("<I", 1) + b"a" + sd + x16
                + struct.pack("<I", len(schema)) + schema)
    assert data == expected
    empty = sk.sketch_bytes('struct<"a":int>', [], 6, columns=False)
    assert len(empty) == 4 + 1 + 4 + 4 + 32 + 8 + 16 + 4 + 6 * 40 + 4 + 4 + 15


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
    (lambda d: d[:4] + b"\x02" + d[5:], "format version 2"),
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


# -- the golden file ------------------------------------------------------------------------------------------

def test_golden_file_recomputes():
    path = os.path.join(GOLDEN, "vectors-sketch.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(GOLDEN, "vectors.json"), encoding="utf-8") as f:
        vectors = {v["name"]: v for v in json.load(f)["vectors"]}
    assert sk.check_doc(doc, vectors) == []
    assert sk.main(["check", path]) == 0


def test_golden_file_examples():
    with open(os.path.join(GOLDEN, "vectors-sketch.json"), encoding="utf-8") as f:
        doc = json.load(f)
    assert len(doc["sketches"]) >= 12 and len(doc["differences"]) >= 6
    diffs = {d["name"]: d for d in doc["differences"]}
    assert list(diffs["duplicates_3_vs_1"]["decode"]["entries"].values()) == [2]
    assert sorted(diffs["right_only_and_changed"]["decode"]["entries"].values()) == [-1, -1, 1]
    assert diffs["identical"]["decode"] == {"success": True, "cells_used": 1, "entries": {}}
    assert sorted(diffs["multiplicities"]["decode"]["entries"].values()) == [-6, -1, 2, 4]
    assert diffs["too_large_for_m"]["decode"] == {"success": False, "cells_used": None}
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
