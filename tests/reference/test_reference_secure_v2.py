"""The reference implementation of SPEC.md §16.7 (dsha-secure-v2; dsha_reference_secure.py) against second,
differently written computations of its parts, against dsha-secure-v1's golden seeds, and against its own rules."""
import hashlib
import json
import os
import random
import struct
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import dsha_reference as ref
import dsha_reference_secure as sec

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden")
SCHEMA = 'struct<"a":int,"s":string,"m":map<int,string>>'
M64 = 1 << 64


def _sd(schema):
    return hashlib.sha256(ref.parse_schema(schema).render().encode()).digest()


def _rows(count, seed=7):
    rng = random.Random(seed)
    return [{"a": rng.choice([None, rng.randrange(-5, 5)]),
             "s": rng.choice([None, "", "x" * rng.randrange(40)]),
             "m": rng.choice([None, [[1, "a"], [2, None]], [[rng.randrange(9), "b" * rng.randrange(20)]]])}
            for _ in range(count)]


def _golden(name):
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        return json.load(f)


# -- a second computation: the whole 128-block input of each key through one ECB call, lanes cut from one integer ----

def _ecb(key, data):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(data) + enc.finalize()


def _stream_whole_ecb(seed, k1, k2):
    a, b = bytearray(seed[:16]), bytearray(seed[16:])
    inputs_1, inputs_2 = bytearray(), bytearray()
    for j in range(128):
        x, y = bytearray(a), bytearray(b)
        x[15] ^= j  # a ⊕ ⟨j⟩ is a with its last byte exclusive-ored with j (j < 128)
        y[15] ^= j
        inputs_1 += x
        inputs_2 += y
    left, right = _ecb(k1, bytes(inputs_1)), _ecb(k2, bytes(inputs_2))
    return (int.from_bytes(left, "big") ^ int.from_bytes(right, "big")).to_bytes(2048, "big")


def _lanes_by_shifts(stream):
    whole = int.from_bytes(stream, "little")
    return [(whole >> (64 * i)) & (M64 - 1) for i in range(256)]


def _independent(schema, rows):
    """(dsha, serialised state, content_sum text, row streams) of a table, from the text of §16.7 and §11.1 with
    hand-written constants; only the secure encoding of a row (§16.1) is the reference's."""
    t = ref.parse_schema(schema)
    text = t.render().encode("utf-8")
    sd = hashlib.sha256(text).digest()
    keys = hashlib.sha256(b"dsha-secure-v2" + sd).digest()
    streams, totals = [], [0] * 256
    for row in rows:
        seed = hashlib.sha256(sd + sec.secure_row_bytes(t, row)).digest()
        stream = _stream_whole_ecb(seed, keys[:16], keys[16:])
        streams.append(stream)
        totals = [(s + lane) % M64 for s, lane in zip(totals, _lanes_by_shifts(stream))]
    lanes = b"".join(x.to_bytes(8, "little") for x in totals)
    count = len(rows).to_bytes(8, "little")
    final = hashlib.sha256(b"dsha-secure-v2" + sd + count + lanes).digest()
    dsha = "f" + "a1b4f501" + "20" + final.hex()
    state = (b"DSHS" + b"\x01" + bytes.fromhex("a1b4f501") + (32).to_bytes(4, "little") + sd + count
             + (2048).to_bytes(4, "little") + lanes + len(text).to_bytes(4, "little") + text)
    return dsha, state, lanes.hex(), streams


# -- the parts -----------------------------------------------------------------------------------------------------

def test_aes_128_known_answer_fips_197_c1():
    out = sec.aes128_block(bytes(range(16)), bytes.fromhex("00112233445566778899aabbccddeeff"))
    assert out.hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    with pytest.raises(ValueError):
        sec.aes128_block(bytes(32), bytes(16))  # AES-256's key length is not AES-128's


def test_keys_are_the_halves_of_sha256_of_the_name_and_schema_digest():
    assert len(b"dsha-secure-v2") == 14 and sec.SECURE2 == "dsha-secure-v2"
    sd = _sd(SCHEMA)
    t = hashlib.sha256(b"dsha-secure-v2" + sd).digest()
    assert sec.secure2_keys(sd) == (t[:16], t[16:])
    # the keys depend on the schema only, and differ between schemas
    assert sec.secure2_keys(_sd('struct<"a":int>')) != sec.secure2_keys(sd)
    assert sec.secure2_keys(_sd('struct<"a":int>'))[0] == hashlib.sha256(
        b"dsha-secure-v2" + _sd('struct<"a":int>')).digest()[:16]


def test_counter_block_and_xor_touch_only_the_last_byte():
    rng = random.Random(2)
    a = bytes(rng.randrange(256) for _ in range(16))
    for j in (0, 1, 77, 127):
        assert sec.counter16(j) == bytes(15) + bytes([j])
        x = sec.xor_bytes(a, sec.counter16(j))
        assert x[:15] == a[:15] and x[15] == a[15] ^ j
    assert sec.xor_bytes(a, sec.counter16(0)) == a


def test_blocks_equal_one_ecb_call_on_the_whole_input():
    rng = random.Random(9)
    sd = _sd(SCHEMA)
    k1, k2 = sec.secure2_keys(sd)
    seeds = [bytes(32), b"\xff" * 32] + [bytes(rng.randrange(256) for _ in range(32)) for _ in range(6)]
    for seed in seeds:
        stream = sec.secure2_stream(seed, k1, k2)
        assert len(stream) == 2048
        assert stream == _stream_whole_ecb(seed, k1, k2)
        for j in (0, 1, 64, 127):
            assert stream[16 * j:16 * j + 16] == sec.secure2_block(seed, j, k1, k2)
    # a single block by hand: X_5 from a and b
    seed = seeds[-1]
    a, b = seed[:16], seed[16:]
    x5 = bytes(p ^ q for p, q in zip(_ecb(k1, a[:15] + bytes([a[15] ^ 5])), _ecb(k2, b[:15] + bytes([b[15] ^ 5]))))
    assert sec.secure2_block(seed, 5, k1, k2) == x5
    # both halves of the seed and both keys matter
    assert sec.secure2_stream(seed, k1, k2) != sec.secure2_stream(seed, k2, k1)
    assert sec.secure2_stream(seed[16:] + seed[:16], k1, k2) != sec.secure2_stream(seed, k1, k2)


def test_lanes_are_little_endian_u64_in_order():
    stream = bytes(range(256)) * 8
    lanes = sec.secure2_lanes_of_stream(stream)
    assert len(lanes) == 256 and lanes == _lanes_by_shifts(stream)
    assert lanes[0] == 0x0706050403020100
    with pytest.raises(ValueError):
        sec.secure2_lanes_of_stream(bytes(4096))


def test_the_row_seed_is_dsha_secure_v1_seed_from_the_golden_file():
    """§16.7: seed as §16.3 — the seeds of vectors-secure.json (dsha-secure-v1) give the v2 streams of the rows."""
    vectors = {v["name"]: v for v in _golden("vectors.json")["vectors"]}
    for expected in _golden("vectors-secure.json")["vectors"][:20]:
        v = vectors[expected["name"]]
        k1, k2 = sec.secure2_keys(_sd(v["schema"]))
        for row, seed_hex in zip(v["rows"], expected["secure"]["seeds"]):
            assert sec.seed(v["schema"], row).hex() == seed_hex
            assert sec.secure2_row_stream(v["schema"], row) == _stream_whole_ecb(bytes.fromhex(seed_hex), k1, k2)


def test_the_golden_file_equals_the_second_computation():
    vectors = {v["name"]: v for v in _golden("vectors.json")["vectors"]}
    doc = _golden("vectors-secure-v2.json")
    assert set(doc) == {"_doc", "vectors"}
    # every vector that the other §16 files hold, in the same order
    assert [e["name"] for e in doc["vectors"]] == [e["name"] for e in _golden("vectors-secure.json")["vectors"]]
    for expected in doc["vectors"]:
        v = vectors[expected["name"]]
        dsha, state, content_sum, streams = _independent(v["schema"], v["rows"])
        got = expected["secure_v2"]
        assert set(got) == {"dsha", "row_streams_sha256", "state_sha256", "content_sum_sha256"}
        assert got["dsha"] == dsha and got["dsha"].startswith("fa1b4f50120") and len(got["dsha"]) == 75
        assert got["row_streams_sha256"] == [hashlib.sha256(s).hexdigest() for s in streams]
        assert got["state_sha256"] == hashlib.sha256(state).hexdigest()
        assert len(content_sum) == 4096
        assert got["content_sum_sha256"] == hashlib.sha256(content_sum.encode("ascii")).hexdigest()


# -- the table -----------------------------------------------------------------------------------------------------

def test_digest_prefix_and_state_layout():
    schema = 'struct<"a":int>'
    for rows in ([], [{"a": 1}], [{"a": 1}, {"a": None}]):
        digest = sec.secure2_digest(schema, rows)["dsha"]
        assert digest.startswith("fa1b4f50120") and len(digest) == 75
        state = sec.secure2_state(schema, rows)
        assert state[:13] == bytes.fromhex("44534853 01 a1b4f501 20000000")
        assert len(state) == 4 + 1 + 4 + 4 + 32 + 8 + 4 + 2048 + 4 + len(schema)
        assert state[53:57] == (2048).to_bytes(4, "little") and state[45:53] == len(rows).to_bytes(8, "little")
        assert sec.finalise_state(state) == digest
    assert sec.CODES[sec.SECURE2] == 0x3D5A21 and ref.varint(0x3D5A21) == bytes.fromhex("a1b4f501")
    assert sec.STATE_BYTES[sec.SECURE2] == 2048


def test_the_empty_table_has_a_zero_state():
    state = sec.secure2_state(SCHEMA, [])
    parsed = sec.parse_state(state)
    assert parsed["rows"] == 0 and parsed["state"] == 0
    assert state[57:57 + 2048] == bytes(2048)
    assert sec.content_sum_hex(sec.SECURE2, 0) == "0" * 4096
    final = hashlib.sha256(b"dsha-secure-v2" + _sd(SCHEMA) + bytes(8) + bytes(2048)).hexdigest()
    assert sec.secure2_digest(SCHEMA, [])["dsha"] == "fa1b4f50120" + final
    # the identity of merging
    some = sec.secure2_state(SCHEMA, _rows(5))
    assert sec.merge_states(state, some) == some == sec.merge_states(some, state)


def test_row_order_does_not_matter_and_duplicates_count():
    rows = _rows(15)
    digest = sec.secure2_digest(SCHEMA, rows)["dsha"]
    for trial in range(3):
        shuffled = rows[:]
        random.Random(trial).shuffle(shuffled)
        assert sec.secure2_digest(SCHEMA, shuffled)["dsha"] == digest
    assert sec.secure2_digest(SCHEMA, rows + rows[:1])["dsha"] != digest
    assert sec.secure2_digest(SCHEMA, rows[1:])["dsha"] != digest
    # a duplicated row and a doubled row count: [x, x] differs from [x] and from [x, y]
    x, y = {"a": 1, "s": "", "m": None}, {"a": 2, "s": "", "m": None}
    assert len({sec.secure2_digest(SCHEMA, r)["dsha"] for r in ([x], [x, x], [x, y], [x, x, y])}) == 4
    # map entry order is not significant (§16.1), entry contents are
    m1 = {"a": 1, "s": None, "m": [[1, "a"], [2, None]]}
    m2 = {"a": 1, "s": None, "m": [[2, None], [1, "a"]]}
    m3 = {"a": 1, "s": None, "m": [[1, None], [2, "a"]]}
    assert sec.secure2_digest(SCHEMA, [m1])["dsha"] == sec.secure2_digest(SCHEMA, [m2])["dsha"]
    assert sec.secure2_digest(SCHEMA, [m1])["dsha"] != sec.secure2_digest(SCHEMA, [m3])["dsha"]


def test_differs_from_dsha_secure_v1_and_between_schemas():
    rows = _rows(6)
    v2 = sec.secure2_digest(SCHEMA, rows)
    v1 = sec.secure_digest(SCHEMA, rows)
    assert v2["dsha"][11:] != v1["dsha"][11:] and v1["dsha"].startswith("fa0b4f50120")
    assert v2["state_sha256"] != v1["state_sha256"]
    # the v2 lanes are not v1's lanes cut short
    row = rows[0]
    v1_lanes = sec.lanes_of_seed(sec.seed(SCHEMA, row))
    assert sec.secure2_lanes_of_stream(sec.secure2_row_stream(SCHEMA, row)) != v1_lanes[:256]
    # the same values under another column name
    other = 'struct<"b":int>'
    assert sec.secure2_digest('struct<"a":int>', [{"a": 1}])["dsha"] != sec.secure2_digest(other, [{"b": 1}])["dsha"]


def test_split_states_merge_to_the_whole_and_finalise_to_the_digest():
    rows = _rows(20)
    whole = sec.secure2_state(SCHEMA, rows)
    for cut in (0, 1, 7, 19, 20):
        merged = sec.merge_states(sec.secure2_state(SCHEMA, rows[:cut]), sec.secure2_state(SCHEMA, rows[cut:]))
        assert merged == whole
    first = sec.merge_states(sec.secure2_state(SCHEMA, rows[10:]), sec.secure2_state(SCHEMA, rows[:3]))
    three = sec.merge_states(first, sec.secure2_state(SCHEMA, rows[3:10]))
    assert three == whole
    digest = sec.secure2_digest(SCHEMA, rows)
    assert sec.finalise_state(whole) == digest["dsha"]
    assert hashlib.sha256(whole).hexdigest() == digest["state_sha256"]
    # the state is the lane-wise sum of the rows' lanes
    totals = [0] * 256
    for row in rows:
        totals = [(s + x) % M64 for s, x in zip(totals, _lanes_by_shifts(sec.secure2_row_stream(SCHEMA, row)))]
    parsed = sec.parse_state(whole)
    assert sec.state_lanes(sec.SECURE2, parsed["state"]) == totals
    content_sum = sec.content_sum_hex(sec.SECURE2, parsed["state"])
    assert content_sum == struct.pack("<256Q", *totals).hex()
    assert hashlib.sha256(content_sum.encode("ascii")).hexdigest() == digest["content_sum_sha256"]
    # states of another algorithm, or of another schema, do not merge with it
    v1 = sec.serialise_state(sec.SECURE, SCHEMA, 1, 0)
    with pytest.raises(ValueError, match="different algorithms"):
        sec.merge_states(whole, v1)
    with pytest.raises(ValueError, match="different algorithms or schemas"):
        sec.merge_states(whole, sec.secure2_state('struct<"a":int>', [{"a": 1}]))


def test_lanes_wrap_mod_2_64_when_states_merge():
    top = M64 - 1
    # a state whose every lane is 2^64 - 1, and one whose lanes are 1 … 256: their merge is 0 … 255
    all_ones = int.from_bytes(struct.pack("<256Q", *([top] * 256)), "little")
    counting = int.from_bytes(struct.pack("<256Q", *range(1, 257)), "little")
    merged = sec.merge_states(sec.serialise_state(sec.SECURE2, SCHEMA, 3, all_ones),
                              sec.serialise_state(sec.SECURE2, SCHEMA, 4, counting))
    parsed = sec.parse_state(merged)
    assert parsed["rows"] == 7 and sec.state_lanes(sec.SECURE2, parsed["state"]) == list(range(256))
    # a real row's state and its complement in every lane merge to the zero state, counting rows
    row_state = sec.secure2_state(SCHEMA, _rows(1))
    lanes = sec.state_lanes(sec.SECURE2, sec.parse_state(row_state)["state"])
    complement = int.from_bytes(struct.pack("<256Q", *[(M64 - x) % M64 for x in lanes]), "little")
    zero = sec.parse_state(sec.merge_states(row_state, sec.serialise_state(sec.SECURE2, SCHEMA, M64 - 1, complement)))
    assert zero["state"] == 0 and zero["rows"] == 0  # the row count wraps mod 2^64 too
    # doubling a row's state 63 times leaves lane_i · 2^63 (its low bit at the top); the 64th gives the zero state
    state = row_state
    for _ in range(63):
        state = sec.merge_states(state, state)
    parsed = sec.parse_state(state)
    assert sec.state_lanes(sec.SECURE2, parsed["state"]) == [(x & 1) << 63 for x in lanes]
    assert parsed["rows"] == 1 << 63 and parsed["state"] != 0
    assert sec.merge_states(state, state) == sec.secure2_state(SCHEMA, [])


def test_state_round_trips_and_bad_states_are_refused():
    rows = _rows(4)
    state = sec.secure2_state(SCHEMA, rows)
    parsed = sec.parse_state(state)
    assert parsed["algorithm"] == sec.SECURE2 and parsed["rows"] == 4
    assert parsed["schema"] == ref.parse_schema(SCHEMA).render() == 'struct<"a":int,"m":map<int,string>,"s":string>'
    assert parsed["schema_digest"] == _sd(SCHEMA)
    assert sec.serialise_state(parsed["algorithm"], parsed["schema"], parsed["rows"], parsed["state"]) == state
    # the combiner state length must be the algorithm's: 2048, not dsha-secure-v1's 4096
    wide = sec.serialise_state(sec.SECURE, SCHEMA, 4, parsed["state"])
    relabelled = wide[:5] + bytes.fromhex("a1b4f501") + wide[9:]
    with pytest.raises(ValueError, match="dsha-secure-v2 has 2048 bytes, not 4096"):
        sec.parse_state(relabelled)
    with pytest.raises(ValueError, match="truncated"):
        sec.parse_state(state[:1000])
    with pytest.raises(ValueError, match="bytes after the state"):
        sec.parse_state(state + b"\x00")
    with pytest.raises(ValueError, match="not a minimal varint"):
        sec.parse_state(state[:5] + bytes.fromhex("a1b4f58100") + state[9:])


# -- the commands --------------------------------------------------------------------------------------------------

def test_check_secure_v2_of_the_filled_file_passes_and_a_damaged_copy_fails(tmp_path):
    path = os.path.join(GOLDEN, "vectors-secure-v2.json")
    assert sec.cmd_check_secure2(path) == 0
    script = os.path.join(HERE, "dsha_reference_secure.py")
    done = subprocess.run([sys.executable, script, "check-secure-v2", path], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 0 and ", 0 mismatches" in done.stdout
    # fill again: the same file
    out = tmp_path / "again.json"
    assert sec.cmd_fill_secure2(os.path.join(GOLDEN, "vectors.json"), str(out)) == 0
    with open(path, "rb") as f:
        assert out.read_bytes() == f.read()
    with open(os.path.join(GOLDEN, "vectors.json"), "rb") as f:
        (tmp_path / "vectors.json").write_bytes(f.read())
    doc = _golden("vectors-secure-v2.json")
    for damage in (lambda e: e.update(dsha="fa1b4f50120" + "00" * 32),
                   lambda e: e["row_streams_sha256"].reverse() if len(e["row_streams_sha256"]) > 1
                   else e["row_streams_sha256"].append("00" * 32),
                   lambda e: e.pop("state_sha256")):
        copy = json.loads(json.dumps(doc))
        target = next(e for e in copy["vectors"] if e["name"] == "table_with_duplicates")
        damage(target["secure_v2"])
        damaged = tmp_path / "vectors-secure-v2.json"
        damaged.write_text(json.dumps(copy), encoding="utf-8")
        assert sec.cmd_check_secure2(str(damaged)) == 1
