"""The tamper-evident algorithms on the Arrow engine (SPEC.md §16): dsha-keyed-v1, dsha-keyed-v2, dsha-secure-v1 and
dsha-secure-v2 byte for byte against every golden vector Arrow can carry (tests/golden/vectors-secure.json,
vectors-keyed-v2.json and vectors-secure-v2.json: digests, content sums, states, each row's MAC / seed / row value /
stream); keys in every spelling; states of parts merging into the whole; long rows (NH's key words grown) against a
scalar computation of §16.6 written here, and rows across dsha-secure-v2's AES chunks against one of §16.7; bad keys
and algorithms refused in one line that never shows the key."""
import base64
import hashlib
import hmac
import json
import os

import pyarrow as pa
import pytest

pytest.importorskip("cryptography")
import dsha  # noqa: E402
import dsha.arrow as da  # noqa: E402
from arrow_helpers import NotCarryable, load_vectors, table_of  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from dsha.arrow._secure import row_values  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
with open(os.path.join(GOLDEN, "vectors-secure.json")) as f:
    SECURE = json.load(f)
with open(os.path.join(GOLDEN, "vectors-keyed-v2.json")) as f:
    KEYED_V2 = json.load(f)
with open(os.path.join(GOLDEN, "vectors-secure-v2.json")) as f:
    SECURE_V2 = json.load(f)
KEY = bytes.fromhex(SECURE["key_hex"])
KEY_V2 = bytes.fromhex(KEYED_V2["key_hex"])
VECTORS = {v["name"]: v for v in load_vectors()}
KEYED_V2_BY_NAME = {v["name"]: v["keyed_v2"] for v in KEYED_V2["vectors"]}
SECURE_V2_BY_NAME = {v["name"]: v["secure_v2"] for v in SECURE_V2["vectors"]}


def _table(name):
    vec = VECTORS[name]
    rows = vec["rows"]
    try:
        return table_of(vec["schema"], rows, list(rows[0].keys()) if rows else None)
    except NotCarryable as e:
        pytest.skip(f"Arrow cannot carry the canonical type {e} (see SPEC.md Appendix A)")


@pytest.mark.parametrize("expected", SECURE["vectors"], ids=[v["name"] for v in SECURE["vectors"]])
def test_golden_vector_keyed_v1_and_secure_v1(expected):
    t = _table(expected["name"])
    keyed = expected["keyed"]
    fp = da.fingerprint(t, key=KEY)
    assert (fp.digest, fp.content_sum, fp.algorithm) == (keyed["dsha"], keyed["content_sum"], "dsha-keyed-v1")
    assert da.state(t, key=KEY).hex() == keyed["state"]
    assert [v.hex() for v in row_values(t, None, "dsha-keyed-v1", KEY)] == keyed["row_macs"]
    secure = expected["secure"]
    fs = da.fingerprint(t, algorithm="secure")
    assert fs.digest == secure["dsha"] and fs.algorithm == "dsha-secure-v1"
    assert hashlib.sha256(fs.content_sum.encode("ascii")).hexdigest() == secure["content_sum_sha256"]
    assert hashlib.sha256(da.state(t, algorithm="dsha-secure-v1")).hexdigest() == secure["state_sha256"]
    assert [v.hex() for v in row_values(t, None, "dsha-secure-v1")] == secure["seeds"]


@pytest.mark.parametrize("name", sorted(KEYED_V2_BY_NAME))
def test_golden_vector_keyed_v2(name):
    t = _table(name)
    expected = KEYED_V2_BY_NAME[name]
    fp = da.fingerprint(t, key=KEY_V2, algorithm="keyed-v2")
    assert (fp.digest, fp.content_sum, fp.algorithm) == (expected["dsha"], expected["content_sum"], "dsha-keyed-v2")
    assert da.state(t, key=KEY_V2, algorithm="dsha-keyed-v2").hex() == expected["state"]
    assert [v.hex() for v in row_values(t, None, "dsha-keyed-v2", KEY_V2)] == expected["row_values"]


@pytest.mark.parametrize("name", sorted(SECURE_V2_BY_NAME))
def test_golden_vector_secure_v2(name):
    t = _table(name)
    expected = SECURE_V2_BY_NAME[name]
    fp = da.fingerprint(t, algorithm="secure-v2")
    assert (fp.digest, fp.algorithm) == (expected["dsha"], "dsha-secure-v2")
    assert fp.digest.startswith("fa1b4f50120") and len(fp.content_sum) == 4096
    assert hashlib.sha256(fp.content_sum.encode("ascii")).hexdigest() == expected["content_sum_sha256"]
    assert hashlib.sha256(da.state(t, algorithm="dsha-secure-v2")).hexdigest() == expected["state_sha256"]
    streams = row_values(t, None, "dsha-secure-v2")
    assert [hashlib.sha256(v).hexdigest() for v in streams] == expected["row_streams_sha256"]
    assert {len(v) for v in streams} <= {2048}


def test_golden_vectors_covered():
    carried = [n for n in KEYED_V2_BY_NAME if _carried(n)]
    assert len(carried) >= 44 and {v["name"] for v in SECURE["vectors"]} == set(KEYED_V2_BY_NAME)
    assert set(SECURE_V2_BY_NAME) == set(KEYED_V2_BY_NAME)
    assert any("map<" in VECTORS[n]["schema"] for n in carried)  # the sorted entries of §16.1, nested too


def _carried(name):
    vec = VECTORS[name]
    try:
        table_of(vec["schema"], vec["rows"], list(vec["rows"][0].keys()) if vec["rows"] else None)
        return True
    except NotCarryable:
        return False


def test_every_key_spelling_is_the_same_key():
    t = pa.table({"id": [1, 2, 3], "s": ["a", None, "ccc"]})
    expected = da.fingerprint(t, key=KEY)
    for spelling in (KEY.hex(), KEY.hex().upper(), f"  {KEY.hex()}\n", base64.b64encode(KEY).decode(),
                     base64.urlsafe_b64encode(KEY).decode().rstrip("="), bytearray(KEY), memoryview(KEY)):
        assert da.fingerprint(t, key=spelling) == expected
    assert da.fingerprint(t, key=KEY, algorithm="dsha-keyed-v1") == expected
    assert da.fingerprint(t, key=KEY, algorithm="keyed-v2").digest.startswith("f91b4f50120")


def test_parts_merge_into_the_whole_and_batches_do_not_matter():
    t = pa.table({"id": list(range(300)), "s": [("x" * (i % 70)) if i % 7 else None for i in range(300)],
                  "m": [{"b": i, "a": -i} if i % 5 else None for i in range(300)]},
                 schema=pa.schema([("id", pa.int64()), ("s", pa.string()), ("m", pa.map_(pa.string(), pa.int64()))]))
    for algorithm, key in (("keyed", KEY), ("keyed-v2", KEY_V2), ("secure", None), ("secure-v2", None)):
        whole = da.fingerprint(t, algorithm=algorithm, key=key)
        assert da.fingerprint(t, algorithm=algorithm, key=key, batch_size=7) == whole
        parts = [da.state(t.slice(0, 100), algorithm=algorithm, key=key),
                 da.state(t.slice(100), algorithm=algorithm, key=key)]
        assert dsha.Fingerprint.from_state(dsha.merge(parts)) == whole
        reordered = t.take(pa.array(list(range(299, -1, -1))))
        assert da.fingerprint(reordered, algorithm=algorithm, key=key) == whole
        assert da.fingerprint(t.slice(1), algorithm=algorithm, key=key) != whole


def _scalar_secure_v2(schema_digest, row):
    """SPEC.md §16.7 for one row, one block at a time: the test's own computation of the 2048-byte stream."""
    t = hashlib.sha256(b"dsha-secure-v2" + schema_digest).digest()
    seed = hashlib.sha256(schema_digest + row).digest()
    out = b""
    for j in range(128):
        x = [Cipher(algorithms.AES(k), modes.ECB()).encryptor().update(half[:15] + bytes([half[15] ^ j]))
             for k, half in ((t[:16], seed[:16]), (t[16:], seed[16:]))]
        out += bytes(p ^ q for p, q in zip(*x))
    return out


def _lane_sums(streams):
    return [sum(int.from_bytes(s[8 * i:8 * i + 8], "little") for s in streams) % 2**64 for i in range(256)]


def test_secure_v2_across_aes_chunks_against_a_scalar_computation():
    """2,600 rows: more than one chunk of rows per AES call (a full one, then a part), in one batch and in batches
    that end inside a chunk; every 97th row's stream and the lane sums equal §16.7 computed here."""
    n = 2600
    t = pa.table({"id": pa.array(range(n), pa.int32())})
    schema_digest = hashlib.sha256(b'struct<"id":int>').digest()
    rows = [b"\x01" + i.to_bytes(4, "little") for i in range(n)]
    streams = row_values(t, None, "dsha-secure-v2")
    assert len(streams) == n and all(streams[i] == _scalar_secure_v2(schema_digest, rows[i]) for i in range(0, n, 97))
    assert streams[1023] == _scalar_secure_v2(schema_digest, rows[1023])  # the last row of the first chunk
    assert streams[1024] == _scalar_secure_v2(schema_digest, rows[1024])
    lanes = _lane_sums(streams)
    expected = b"".join(x.to_bytes(8, "little") for x in lanes)
    fp = da.fingerprint(t, algorithm="secure-v2")
    assert fp.content_sum == expected.hex() and fp.rows == n
    final = hashlib.sha256(b"dsha-secure-v2" + schema_digest + n.to_bytes(8, "little") + expected).hexdigest()
    assert fp.digest == "fa1b4f50120" + final
    for batch_size in (1000, 1500, 3000):
        assert da.fingerprint(t, algorithm="secure-v2", batch_size=batch_size) == fp


def test_secure_v2_is_duplicate_sensitive_and_not_secure_v1():
    t = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", None, "ccc"], "x": [0.5, -0.0, float("nan")]})
    v2 = da.fingerprint(t, algorithm="secure-v2")
    v1 = da.fingerprint(t, algorithm="secure")
    assert v2.digest.startswith("fa1b4f50120") and v1.digest.startswith("fa0b4f50120") and v2.digest != v1.digest
    assert len(da.state(t, algorithm="secure-v2")) < len(da.state(t, algorithm="secure"))  # 2048 against 4096 bytes
    doubled_row = pa.concat_tables([t, t.slice(0, 1)])
    doubled = pa.concat_tables([t, t])
    assert len({da.fingerprint(x, algorithm="secure-v2").digest for x in (t, doubled_row, doubled)}) == 3
    # a duplicate adds its lanes again: the state of t twice is t's state merged with itself
    whole = da.state(doubled, algorithm="secure-v2")
    assert dsha.merge([da.state(t, algorithm="secure-v2")] * 2) == whole
    assert da.fingerprint(doubled, algorithm="secure-v2", batch_size=2) == dsha.Fingerprint.from_state(whole)
    # the lanes of the removed duplicate: the difference of the states is exactly the row's stream
    extra = _lane_sums([row_values(t.slice(0, 1), None, "dsha-secure-v2")[0]])
    base = bytes.fromhex(v2.content_sum)
    plus = bytes.fromhex(da.fingerprint(doubled_row, algorithm="secure-v2").content_sum)
    for i in range(256):
        lane = slice(8 * i, 8 * i + 8)
        assert (int.from_bytes(base[lane], "little") + extra[i]) % 2**64 == int.from_bytes(plus[lane], "little")


def test_secure_v2_of_no_rows():
    empty = pa.table({"id": pa.array([], pa.int64())})
    fp = da.fingerprint(empty, algorithm="dsha-secure-v2")
    schema_digest = hashlib.sha256(b'struct<"id":bigint>').digest()
    assert fp.content_sum == "0" * 4096 and fp.rows == 0
    assert fp.digest == "fa1b4f50120" + hashlib.sha256(b"dsha-secure-v2" + schema_digest + bytes(8 + 2048)).hexdigest()
    assert row_values(empty, None, "dsha-secure-v2") == []
    with pytest.raises(ValueError, match="key= and algorithm='keyed' go together"):
        da.fingerprint(empty, algorithm="secure-v2", key=KEY)


def _scalar_keyed_v2(key, schema_digest, row):
    """SPEC.md §16.6 for one row, one integer at a time: the test's own computation."""
    seed = hmac.new(key, b"dsha-keyed-v2" + schema_digest, hashlib.sha256).digest()
    n = (len(row) + 15) // 16
    need = 48 + 8 * (2 * n + 2)
    stream = Cipher(algorithms.AES(seed), modes.CTR(bytes(16))).encryptor().update(bytes(need + 16))
    p = (1 << 127) - 1
    r = (int.from_bytes(stream[:16], "little") % (1 << 127)) % p
    k = [int.from_bytes(stream[48 + 8 * i:56 + 8 * i], "little") for i in range(2 * n + 2)]
    m = row + bytes(16 * n - len(row))
    w = [int.from_bytes(m[8 * t:8 * t + 8], "little") for t in range(2 * n)]
    nh = [sum(((w[2 * i] + k[2 * i + 2 * j]) % 2**64) * ((w[2 * i + 1] + k[2 * i + 1 + 2 * j]) % 2**64)
              for i in range(n)) % 2**128 for j in (0, 1)]
    a = [nh[0] % 2**64, nh[0] >> 64, nh[1] % 2**64, nh[1] >> 64, len(row)]
    u = sum(a[i] * pow(r, 5 - i, p) for i in range(5)) % p
    enc = Cipher(algorithms.AES(stream[16:48]), modes.ECB()).encryptor()
    return enc.update(u.to_bytes(16, "little") + (u + 2**127).to_bytes(16, "little"))


def test_keyed_v2_long_rows_against_a_scalar_computation():
    """Rows from 0 to 3,000 bytes: NH's key words grow past what the first rows needed, rows of one block count are
    hashed as a matrix; each equals §16.6 computed one integer at a time."""
    values = [os.urandom(n) for n in (0, 1, 11, 15, 16, 17, 100, 255, 1000, 2999)] + [None]
    t = pa.table({"b": pa.array(values, pa.binary())})
    schema_digest = hashlib.sha256(b'struct<"b":binary>').digest()
    expected = [_scalar_keyed_v2(KEY_V2, schema_digest, b"\x00" if v is None else
                                 b"\x01" + len(v).to_bytes(4, "little") + v) for v in values]
    assert row_values(t, None, "dsha-keyed-v2", KEY_V2) == expected


def test_bad_keys_and_algorithms_are_one_line_errors_without_the_key():
    t = pa.table({"id": [1]})
    short = os.urandom(12)
    for key, message in ((short, "has 12 bytes: a key needs at least 16"),
                         (short.hex(), "has 12 bytes: a key needs at least 16"),
                         ("not a key!", "neither hex nor base64"),
                         ("0x" + KEY.hex(), "0x prefix"),
                         ("conf:spark.dsha.secret.x", "conf:NAME reference")):
        with pytest.raises(ValueError, match=message) as e:
            da.fingerprint(t, key=key)
        text = str(e.value)
        assert "\n" not in text and short.hex() not in text and KEY.hex() not in text
    with pytest.raises(TypeError, match="bytes or a hex/base64 str, not int"):
        da.fingerprint(t, key=12345678901234567890)
    with pytest.raises(ValueError, match="unknown dsha algorithm 'sha1'"):
        da.fingerprint(t, algorithm="sha1")
    with pytest.raises(ValueError, match="key= and algorithm='keyed' go together"):
        da.fingerprint(t, algorithm="secure", key=KEY)
    with pytest.raises(ValueError, match="key= and algorithm='keyed' go together"):
        da.fingerprint(t, algorithm="keyed-v2")
