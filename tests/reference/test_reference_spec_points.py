"""The points SPEC.md decides for an implementation written from it alone (issue 34, item 10), as the reference
implements them: key spellings and key references (§16.2, §16.6), the secure encoding of a variant object (§16.1),
state lengths of every algorithm (§11.2), row counts of 2^63 or more (§6, §11), the estimate of a difference that
does not decode (§17.4) and the text hashed for content_sum_sha256 (§16.5). Expected bytes are written out from the
text of the specification; tests/python/test_spec_decisions.py holds the jar to the same values."""
import base64
import hashlib
import json
import math
import os
import struct
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dsha_reference as ref  # noqa: E402
import dsha_reference_secure as sec  # noqa: E402
import dsha_reference_sketch as sk  # noqa: E402

HEX64 = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef"
KEY = bytes.fromhex(HEX64)


# -- §16.2 keys written as text ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [HEX64, HEX64.upper(), " " + HEX64, HEX64 + "\n", "\t\r\n " + HEX64 + "\x00\x1f ",
                                  "\x01" + HEX64])
def test_hex_after_removing_u0000_to_u0020_at_either_end(text):
    assert sec.parse_key(text) == KEY


def test_an_odd_number_of_hex_digits_is_base64():
    # 63 hex digits are no hex; they are valid unpadded base64 of 63 characters: 47 bytes
    key = sec.parse_key(HEX64[:63])
    assert len(key) == 47 and key == base64.b64decode(HEX64[:63] + "=")
    assert key[:2] != KEY[:2]


def test_0x_is_no_prefix():
    # "0x" + 64 hex digits: 'x' is a base64 character, so the 66 characters are base64: 49 bytes, not the 32 meant
    key = sec.parse_key("0x" + HEX64)
    assert len(key) == 49 and key == base64.b64decode("0x" + HEX64 + "==")


def test_base64_alphabets_and_padding():
    raw = bytes(range(250, 256)) + bytes(range(26))  # 32 bytes, with + and / (- and _) in its base64
    std = base64.b64encode(raw).decode()
    url = base64.urlsafe_b64encode(raw).decode()
    assert "+" in std or "/" in std
    for text in (std, std.rstrip("="), url, url.rstrip("="), std.rstrip("=") + "==",
                 url.replace("-", "+", 1)):  # padding optional and not counted; the two alphabets may mix
        assert sec.parse_key(text) == raw, text


@pytest.mark.parametrize("text", [
    "",
    "\u00a0" + HEX64,  # U+00A0 is not removed
    HEX64[:32] + " " + HEX64[32:],  # nor are inner spaces
    "A" * 25,  # 25 base64 characters: 1 more than a multiple of 4
    HEX64 + "===",  # at most two '='
    "=" + HEX64,
    HEX64[:30],  # 15 bytes: a key has at least 16
    base64.b64encode(bytes(15)).decode(),
])
def test_refused_key_texts(text):
    with pytest.raises(ValueError):
        sec.parse_key(text)


def test_key_references():
    assert sec.key_reference("conf:spark.dsha.secret.k") == ("spark.dsha.secret.k", None)
    assert sec.key_reference("conf:k#dsha-keyed-v2") == ("k", "dsha-keyed-v2")
    assert sec.key_reference("conf: k # dsha-keyed-v1 ") == ("k", "dsha-keyed-v1")
    assert sec.key_reference("conf:a#b#dsha-keyed-v2") == ("a#b", "dsha-keyed-v2")  # the last '#'
    for wrong in ("keyed-v2", "keyed", "DSHA-KEYED-V2", "dsha-secure-v1", "dsha-v1", ""):
        with pytest.raises(ValueError, match="no keyed algorithm"):
            sec.key_reference("conf:k#" + wrong)


# -- §16.1 a variant object keeps its tag ------------------------------------------------------------------------

def test_secure_variant_object_keeps_tag_13_then_the_sorted_set():
    v = ref.parse_variant_text('{"b": 1, "a": true}')
    entry_a = ref.u32(1) + b"a" + b"\x01\x01"  # key length, key, value: tag 1 (boolean), true
    entry_b = ref.u32(1) + b"b" + b"\x02" + struct.pack("<q", 1)  # tag 2 (integer), i64
    want = b"\x0d" + ref.u32(2) + ref.u32(len(entry_a)) + entry_a + ref.u32(len(entry_b)) + entry_b
    assert sec.secure_variant(v) == want
    assert want.hex() == "0d02000000" "07000000" "01000000" "61" "0101" "0e000000" "01000000" "62" "02" "0100000000000000"
    # nested: an object in an array in an object, each object with its tag
    nested = sec.secure_variant(ref.parse_variant_text('{"x": [{}]}'))
    inner = b"\x0c" + ref.u32(1) + b"\x0d" + ref.u32(0)
    assert nested == b"\x0d" + ref.u32(1) + ref.u32(5 + len(inner)) + ref.u32(1) + b"x" + inner
    # as a column value: the slot, then the variant's tag and layout
    t = ref.parse_schema('struct<"v":variant>')
    assert sec.secure_row_bytes(t, {"v": {"variant": '{"b": 1, "a": true}'}}) == b"\x01" + want


# -- §11.2 lengths of every algorithm ---------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm, width", [("dsha-keyed-v1", 32), ("dsha-keyed-v2", 32), ("dsha-secure-v1", 4096),
                                              ("dsha-secure-v2", 2048)])
def test_state_lengths_of_the_section_16_algorithms(algorithm, width):
    schema = 'struct<"a":int>'
    state = sec.serialise_state(algorithm, schema, 3, 7)
    assert sec.parse_state(state)["rows"] == 3 and sec.STATE_BYTES[algorithm] == width
    code = len(ref.varint(sec.CODES[algorithm]))
    at_digest_length, at_width = 5 + code, 5 + code + 4 + 32 + 8
    assert struct.unpack_from("<I", state, at_digest_length)[0] == 32
    assert struct.unpack_from("<I", state, at_width)[0] == width
    for n in (width - 8, width + 8, 16):
        bad = state[:at_width] + struct.pack("<I", n) + state[at_width + 4:]
        with pytest.raises(ValueError):
            sec.parse_state(bad)
    # a schema digest of another length (its bytes and the schema after it re-laid) is refused as such
    short = state[:at_digest_length] + struct.pack("<I", 31) + state[at_digest_length + 4:at_digest_length + 4 + 31] \
        + state[at_digest_length + 4 + 32:]
    with pytest.raises(ValueError, match="schema digest has 31 bytes"):
        sec.parse_state(short)
    # a varint that is not minimal
    long_code = state[:5] + ref.varint(sec.CODES[algorithm])[:-1] + bytes([ref.varint(sec.CODES[algorithm])[-1]
                                                                              | 0x80, 0]) + state[5 + code:]
    with pytest.raises(ValueError, match="minimal"):
        sec.parse_state(long_code)


# -- §6, §11 row counts of 2^63 or more -------------------------------------------------------------------------

def test_row_counts_are_u64():
    schema = 'struct<"a":int>'
    rows = (1 << 63) + 5
    state = ref.serialise_state(schema, rows, 12345)
    assert ref.parse_state(state)["rows"] == rows
    sd = ref.schema_digest(schema)
    final = hashlib.sha256(b"dsha-v1" + sd + struct.pack("<Q", rows) + ref.u128_bytes(12345)).digest()
    assert ref.finalise_state(state) == ref.digest_string(final)
    # merging wraps mod 2^64 (§11.3)
    top = ref.serialise_state(schema, (1 << 64) - 1, 0)
    assert ref.parse_state(ref.merge_states(top, ref.serialise_state(schema, 2, 0)))["rows"] == 1
    # SQL's fingerprint shows the same 64 bits as a BIGINT: two's complement
    assert struct.unpack("<q", struct.pack("<Q", rows))[0] == rows - (1 << 64)


# -- §17.4 the estimate ---------------------------------------------------------------------------------------

def test_estimate_is_rounded_up_over_the_unfolded_difference():
    x = [hashlib.sha256(bytes([i])).digest()[:16] for i in range(40)]
    cells = sk.sketch_cells([(d, 1, 7) for d in x], 12, filters=True)
    z = sum(1 for c in cells if c[:3] == [0, 0, 0])
    assert z == 0 and sk.estimate(cells) == math.ceil(-(12 / 3) * math.log(0.5 / 12)) == 13
    few = sk.sketch_cells([(x[0], 1, 7)], 12, filters=True)
    z = sum(1 for c in few if c[:3] == [0, 0, 0])
    assert 9 <= z <= 11 and sk.estimate(few) == math.ceil(-(12 / 3) * math.log(z / 12))
    # a cell whose count, sum and check are zero counts as zero whatever its filter word holds
    few[next(i for i, c in enumerate(few) if c[:3] == [0, 0, 0])][3] = 99
    assert sk.estimate(few) == math.ceil(-(12 / 3) * math.log(z / 12))
    # the difference of sketches of 12 and 8 cells is estimated at their gcd, 4 cells, before any fold
    diff = sk.subtract(sk.sketch_cells([(d, 1) for d in x], 12), sk.sketch_cells([], 8))
    assert len(diff) == 4 and sk.estimate(diff) == math.ceil(-(4 / 3) * math.log(0.5 / 4))


# -- §16.5 content_sum_sha256 -----------------------------------------------------------------------------------

def test_content_sum_sha256_is_of_the_ascii_hex_text():
    with open(os.path.join(HERE, "..", "golden", "vectors-secure.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(HERE, "..", "golden", "vectors.json"), encoding="utf-8") as f:
        tables = {v["name"]: v for v in json.load(f)["vectors"]}
    entry = next(v for v in doc["vectors"] if v["name"] == "int")
    secure = entry.get("secure", entry)
    t = tables["int"]
    lanes = sec.lanes_of_seed(sec.seed(t["schema"], t["rows"][0]))
    state = struct.pack("<512Q", *lanes)  # one row: the state is its lanes
    text = state.hex()  # 8192 lower-case hex digits in byte order
    assert len(text) == 8192
    assert secure["content_sum_sha256"] == hashlib.sha256(text.encode("ascii")).hexdigest()
    serialised = sec.serialise_state("dsha-secure-v1", t["schema"], 1, int.from_bytes(state, "little"))
    assert secure["state_sha256"] == hashlib.sha256(serialised).hexdigest()
