#!/usr/bin/env python3
"""Reference implementation of SPEC.md §16: dsha-keyed-v1 and dsha-secure-v1, in plain Python (hashlib, hmac and
the PyPI package ``cryptography`` for AES-256 and AES-128), on top of the v1 reference (canonical schema, leaf
encodings, states); and of dsha-keyed-v2 (§16.6) and dsha-secure-v2 (§16.7).

    python dsha_reference_secure.py check tests/golden/vectors-secure.json
    python dsha_reference_secure.py fill tests/golden/vectors.json OUT.json [--key-hex HEX]
    python dsha_reference_secure.py check-keyed-v2 tests/golden/vectors-keyed-v2.json
    python dsha_reference_secure.py fill-keyed-v2 tests/golden/vectors.json OUT.json [--key-hex HEX]
    python dsha_reference_secure.py check-secure-v2 tests/golden/vectors-secure-v2.json
    python dsha_reference_secure.py fill-secure-v2 tests/golden/vectors.json OUT.json
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import struct
import sys
from typing import Any, List

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import dsha_reference as ref

KEYED, SECURE = "dsha-keyed-v1", "dsha-secure-v1"
KEYED2 = "dsha-keyed-v2"  # §16.6
SECURE2 = "dsha-secure-v2"  # §16.7
CODES = {KEYED: 0x3D5A10, SECURE: 0x3D5A20, KEYED2: 0x3D5A11, SECURE2: 0x3D5A21}
STATE_BYTES = {KEYED: 32, SECURE: 4096, KEYED2: 32, SECURE2: 2048}
SUM_ALGORITHMS = (KEYED, KEYED2)  # §16.2 and §16.6: one 32-byte sum mod 2^256
LANE_ALGORITHMS = (SECURE, SECURE2)  # §16.3 and §16.7: u64 lanes, each summed mod 2^64 (STATE_BYTES / 8 of them)
LANES = 512  # dsha-secure-v1 (§16.3)
LANES2 = 256  # dsha-secure-v2 (§16.7)
M64 = 1 << 64


# -- §16.1 secure encoding -------------------------------------------------------------------------------------

def _sorted_set(entries: List[bytes]) -> bytes:
    return ref.u32(len(entries)) + b"".join(ref.u32(len(e)) + e for e in sorted(entries))


def secure_value(t: ref.DType, v: Any) -> bytes:
    """§3's layout of a present value, with maps and variant objects as sorted length-prefixed entries."""
    if t.kind == "map":
        if not isinstance(v, list):
            raise ValueError(f"{t.render()}: expected a list of [key, value] pairs, got {v!r}")
        for entry in v:
            if not (isinstance(entry, list) and len(entry) == 2) or entry[0] is None:
                raise ValueError(f"{t.render()}: bad map entry {entry!r}")
        return _sorted_set([secure_slot(t.key, k) + secure_slot(t.value, x) for k, x in v])
    if t.kind == "array":
        if not isinstance(v, list):
            raise ValueError(f"{t.render()}: expected a list, got {v!r}")
        return ref.u32(len(v)) + b"".join(secure_slot(t.element, e) for e in v)
    if t.kind == "struct":
        ref.encode_struct(t, v)  # its checks
        return b"".join(secure_slot(ft, v[n]) for n, ft in t.fields)
    if t.kind == "variant":
        if not (isinstance(v, dict) and set(v) == {"variant"} and isinstance(v["variant"], str)):
            raise ValueError(f'variant: expected {{"variant": JSON text}}, got {v!r}')
        return secure_variant(ref.parse_variant_text(v["variant"]))
    return ref.encode_value(t, v)


def secure_variant(v: Any) -> bytes:
    if isinstance(v, ref._JObj):
        return b"\x0d" + _sorted_set([ref.lenbytes(k.encode("utf-8")) + secure_variant(x) for k, x in v])
    if isinstance(v, list):
        return b"\x0c" + ref.u32(len(v)) + b"".join(secure_variant(e) for e in v)
    return ref.encode_variant(v)


def secure_slot(t: ref.DType, v: Any) -> bytes:
    return b"\x00" if v is None else b"\x01" + secure_value(t, v)


def secure_row_bytes(schema: ref.DType, row: dict) -> bytes:
    ref.encode_struct(schema, row)
    return b"".join(secure_slot(ft, row[n]) for n, ft in schema.fields)


def _schema(schema_str: str):
    t = ref.parse_schema(schema_str)
    return t, hashlib.sha256(t.render().encode("utf-8")).digest()


# -- §16.2 and §16.3 row values --------------------------------------------------------------------------------

def parse_key(text: str) -> bytes:
    """A key written as text (§16.2): hex if valid hex, else base64 (standard or URL-safe, padding optional), after
    removing the characters U+0000-U+0020 at either end (and nothing else: not U+00A0, not inner spaces)."""
    t = text.strip("".join(map(chr, range(0x21))))
    if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", t):
        key = bytes.fromhex(t)
    elif re.fullmatch(r"[A-Za-z0-9+/_-]+={0,2}", t):
        core = t.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            key = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
        except binascii.Error:
            raise ValueError(f"a key of {len(t)} characters is neither hex nor base64") from None
    else:
        raise ValueError(f"a key of {len(t)} characters is neither hex nor base64")
    if len(key) < 16:
        raise ValueError(f"the key is {len(key)} bytes; a key needs at least 16")
    return key


KEYED_IDS = (KEYED, KEYED2)


def key_reference(text: str):
    """§16.2/§16.6: a key reference ``conf:NAME`` or ``conf:NAME#ALGORITHM`` as (NAME, algorithm id or None). The text
    after the last ``#`` is the algorithm: an id of a keyed algorithm, exactly (after U+0000-U+0020 at either end are
    removed, as from NAME); anything else, such as Python's short name ``keyed-v2``, is an error."""
    if not text.startswith("conf:"):
        raise ValueError("a key reference starts with 'conf:'")
    body = text[len("conf:"):]
    blank = "".join(map(chr, range(0x21)))
    if "#" not in body:
        return body.strip(blank), None
    name, algorithm = body.rsplit("#", 1)
    algorithm = algorithm.strip(blank)
    if algorithm not in KEYED_IDS:
        raise ValueError(f"{algorithm!r} is no keyed algorithm (known: {', '.join(KEYED_IDS)})")
    return name.strip(blank), algorithm


def row_mac(schema_str: str, row: dict, key: bytes) -> bytes:
    t, sd = _schema(schema_str)
    return hmac.new(key, sd + secure_row_bytes(t, row), hashlib.sha256).digest()


def seed(schema_str: str, row: dict) -> bytes:
    t, sd = _schema(schema_str)
    return hashlib.sha256(sd + secure_row_bytes(t, row)).digest()


def lanes_of_seed(s: bytes) -> List[int]:
    enc = Cipher(algorithms.AES(s), modes.CTR(bytes(16))).encryptor()
    stream = enc.update(bytes(8 * LANES)) + enc.finalize()
    return list(struct.unpack(f"<{LANES}Q", stream))


# -- combination, finalisation, states -------------------------------------------------------------------------

def _lane_count(algorithm: str) -> int:
    """The number of u64 lanes of a lane algorithm's state: 512 for dsha-secure-v1, 256 for dsha-secure-v2."""
    if algorithm not in LANE_ALGORITHMS:
        raise ValueError(f"{algorithm} has no lanes")
    return STATE_BYTES[algorithm] // 8


def _state_int(algorithm: str, values) -> int:
    """The combiner state as the integer of its bytes read little-endian. ``values`` are the rows' 32-byte values
    (a sum algorithm) or their lists of lanes (a lane algorithm: each row's list as long as the state's)."""
    if algorithm in SUM_ALGORITHMS:
        return sum(int.from_bytes(v, "little") for v in values) % (1 << 256)
    count = _lane_count(algorithm)
    lanes = [0] * count
    for v in values:
        if len(v) != count:
            raise ValueError(f"{algorithm}: a row of {len(v)} lanes, not {count}")
        lanes = [(a + b) % M64 for a, b in zip(lanes, v)]
    return int.from_bytes(struct.pack(f"<{count}Q", *lanes), "little")


def state_lanes(algorithm: str, state: int) -> List[int]:
    """A lane algorithm's state (the integer of its bytes read little-endian) as its lanes S_0, S_1, …"""
    count = _lane_count(algorithm)
    return list(struct.unpack(f"<{count}Q", state.to_bytes(8 * count, "little")))


def _final(algorithm: str, sd: bytes, rows: int, state: int) -> str:
    final = hashlib.sha256(algorithm.encode("ascii") + sd + struct.pack("<Q", rows)
                           + state.to_bytes(STATE_BYTES[algorithm], "little")).digest()
    return "f" + (ref.varint(CODES[algorithm]) + ref.varint(32) + final).hex()


def content_sum_hex(algorithm: str, state: int) -> str:
    """§16.2/§16.6: the sum, most significant first; §16.3/§16.7: the state bytes (lanes little-endian) in order."""
    if algorithm in SUM_ALGORITHMS:
        return format(state, "064x")
    return state.to_bytes(STATE_BYTES[algorithm], "little").hex()


def serialise_state(algorithm: str, schema_str: str, rows: int, state: int) -> bytes:
    t, sd = _schema(schema_str)
    text = t.render().encode("utf-8")
    width = STATE_BYTES[algorithm]
    return (b"DSHS\x01" + ref.varint(CODES[algorithm]) + ref.u32(32) + sd + struct.pack("<Q", rows)
            + ref.u32(width) + state.to_bytes(width, "little") + ref.u32(len(text)) + text)


def parse_state(data: bytes) -> dict:
    """§11.2 for the §16 algorithms: magic, version, code, lengths, schema text against its digest."""
    if data[:5] != b"DSHS\x01":
        raise ValueError("bad magic or format version")
    at, code, shift = 5, 0, 0
    while True:
        if at >= len(data):
            raise ValueError("truncated")
        b = data[at]
        at += 1
        code |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if data[5:at] != ref.varint(code):
        raise ValueError("the algorithm code is not a minimal varint")
    algorithm = {c: a for a, c in CODES.items()}.get(code)
    if algorithm is None:
        raise ValueError(f"unknown algorithm code {code:#x}")

    def take(n):
        nonlocal at
        if at + n > len(data):
            raise ValueError("truncated")
        at += n
        return data[at - n:at]

    sd = take(struct.unpack("<I", take(4))[0])
    if len(sd) != 32:  # §11.2: 32 for every algorithm
        raise ValueError(f"the schema digest has {len(sd)} bytes, not 32")
    rows = struct.unpack("<Q", take(8))[0]
    width = struct.unpack("<I", take(4))[0]
    if width != STATE_BYTES[algorithm]:
        raise ValueError(f"the combiner state of {algorithm} has {STATE_BYTES[algorithm]} bytes, not {width}")
    state = int.from_bytes(take(width), "little")
    text = take(struct.unpack("<I", take(4))[0])
    if at != len(data):
        raise ValueError("bytes after the state")
    if hashlib.sha256(text).digest() != sd:
        raise ValueError("the schema text does not match its digest")
    try:
        schema = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"the schema is not valid UTF-8: {e}") from None
    return {"algorithm": algorithm, "schema_digest": sd, "rows": rows, "state": state, "schema": schema}


def merge_states(a: bytes, b: bytes) -> bytes:
    x, y = parse_state(a), parse_state(b)
    if x["algorithm"] != y["algorithm"] or x["schema_digest"] != y["schema_digest"]:
        raise ValueError("states of different algorithms or schemas")
    alg = x["algorithm"]
    if alg in SUM_ALGORITHMS:
        state = (x["state"] + y["state"]) % (1 << 256)
    else:
        la, lb = state_lanes(alg, x["state"]), state_lanes(alg, y["state"])
        count = _lane_count(alg)
        state = int.from_bytes(struct.pack(f"<{count}Q", *[(p + q) % M64 for p, q in zip(la, lb)]), "little")
    return serialise_state(alg, x["schema"], (x["rows"] + y["rows"]) % M64, state)


def finalise_state(data: bytes) -> str:
    s = parse_state(data)
    return _final(s["algorithm"], s["schema_digest"], s["rows"], s["state"])


def keyed_digest(schema_str: str, rows: list, key: bytes) -> dict:
    _, sd = _schema(schema_str)
    macs = [row_mac(schema_str, r, key) for r in rows]
    state = _state_int(KEYED, macs)
    return {"dsha": _final(KEYED, sd, len(rows), state), "content_sum": content_sum_hex(KEYED, state),
            "row_macs": [m.hex() for m in macs], "state": serialise_state(KEYED, schema_str, len(rows), state).hex()}


def secure_digest(schema_str: str, rows: list) -> dict:
    _, sd = _schema(schema_str)
    seeds = [seed(schema_str, r) for r in rows]
    state = _state_int(SECURE, [lanes_of_seed(s) for s in seeds])
    # The 4 KiB state (and content_sum, its lanes) by their SHA-256, to keep the vector file small.
    state_bytes = serialise_state(SECURE, schema_str, len(rows), state)
    return {"dsha": _final(SECURE, sd, len(rows), state), "seeds": [s.hex() for s in seeds],
            "content_sum_sha256": hashlib.sha256(content_sum_hex(SECURE, state).encode()).hexdigest(),
            "state_sha256": hashlib.sha256(state_bytes).hexdigest()}


# -- §16.6 dsha-keyed-v2 -------------------------------------------------------------------------------------

P127 = (1 << 127) - 1  # §16.6: p = 2^127 - 1
M128 = 1 << 128


def check_key_length(key: bytes) -> None:
    """§16.6: "The key K is as in §16.2", a byte string of at least 16 bytes (the message of ``parse_key``)."""
    if len(key) < 16:
        raise ValueError(f"the key is {len(key)} bytes; a key needs at least 16")


def aes256_block(key: bytes, block: bytes) -> bytes:
    """§16.6: AES-256 is FIPS 197 encryption of one 16-byte block."""
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def aes256_ctr_stream(key: bytes, length: int) -> bytes:
    """§16.6 (as §16.3): block j = AES-256_key(j as a 16-byte big-endian integer), j = 0, 1, 2, …, concatenated;
    the first ``length`` bytes. Written block by block from the text (not with a CTR mode)."""
    blocks = (length + 15) // 16
    return b"".join(aes256_block(key, j.to_bytes(16, "big")) for j in range(blocks))[:length]


def keyed2_seed(key: bytes, schema_digest: bytes) -> bytes:
    """§16.6: seed = HMAC-SHA-256(K, "dsha-keyed-v2" (13 ASCII bytes) || schema_digest)."""
    check_key_length(key)
    return hmac.new(key, KEYED2.encode("ascii") + schema_digest, hashlib.sha256).digest()


def keyed2_subkeys(key: bytes, schema_digest: bytes, words: int):
    """§16.6 subkeys, once per table: (r, E, [k_0 … k_{words-1}]) from the keystream under the seed:
    r = u128le(stream[0, 16)) mod 2^127, then mod p; E = stream[16, 48); k_i = u64le(stream[48 + 8i, 56 + 8i))."""
    stream = aes256_ctr_stream(keyed2_seed(key, schema_digest), 48 + 8 * words)
    r = int.from_bytes(stream[0:16], "little") % (1 << 127) % P127
    e = stream[16:48]
    k = [int.from_bytes(stream[48 + 8 * i:56 + 8 * i], "little") for i in range(words)]
    return r, e, k


def keyed2_blocks(length: int) -> int:
    """§16.6: n = ceil(L / 16) (0 when L = 0)."""
    return (length + 15) // 16


def keyed2_key_words(length: int) -> int:
    """How many NH key words a message of ``length`` bytes reads: k_0 … k_{2n+1} (the largest index, for
    j = 1 and i = n - 1, is 2(n-1) + 1 + 2 = 2n + 1)."""
    return 2 * keyed2_blocks(length) + 2


def keyed2_words(m: bytes) -> List[int]:
    """§16.6: m padded with zero bytes to 16·n bytes, read as w_t = u64le(m[8t, 8t + 8)), t = 0 … 2n - 1."""
    n = keyed2_blocks(len(m))
    padded = m + bytes(16 * n - len(m))
    return [int.from_bytes(padded[8 * t:8 * t + 8], "little") for t in range(2 * n)]


def keyed2_nh(m: bytes, k: List[int]):
    """§16.6: NH_j = sum over i < n of ((w_2i + k_{2i+2j}) mod 2^64)·((w_{2i+1} + k_{2i+1+2j}) mod 2^64) mod 2^128,
    for j = 0, 1 (exact products of integers below 2^64; the empty sum is 0)."""
    w = keyed2_words(m)
    n = len(w) // 2
    out = []
    for j in (0, 1):
        total = 0
        for i in range(n):
            total += ((w[2 * i] + k[2 * i + 2 * j]) % M64) * ((w[2 * i + 1] + k[2 * i + 1 + 2 * j]) % M64)
        out.append(total % M128)
    return out[0], out[1]


def keyed2_coefficients(nh0: int, nh1: int, length: int):
    """§16.6: a = (NH_0 mod 2^64, floor(NH_0 / 2^64), NH_1 mod 2^64, floor(NH_1 / 2^64), L)."""
    return nh0 % M64, nh0 >> 64, nh1 % M64, nh1 >> 64, length


def keyed2_poly(a, r: int) -> int:
    """§16.6: u = (a_0·r^5 + a_1·r^4 + a_2·r^3 + a_3·r^2 + a_4·r) mod p, evaluated term by term as written."""
    return (a[0] * r ** 5 + a[1] * r ** 4 + a[2] * r ** 3 + a[3] * r ** 2 + a[4] * r) % P127


def keyed2_encipher(u: int, e: bytes) -> bytes:
    """§16.6: row_v = AES-256_E(u as 16 bytes LE) || AES-256_E((u + 2^127) as 16 bytes LE)."""
    return aes256_block(e, u.to_bytes(16, "little")) + aes256_block(e, (u + (1 << 127)).to_bytes(16, "little"))


def keyed2_u(m: bytes, r: int, k: List[int]) -> int:
    """§16.6: the universal hash u of a row's secure encoding m (without the schema digest)."""
    nh0, nh1 = keyed2_nh(m, k)
    return keyed2_poly(keyed2_coefficients(nh0, nh1, len(m)), r)


def keyed2_value_of_encoding(m: bytes, r: int, e: bytes, k: List[int]) -> bytes:
    """§16.6: row_v of the secure encoding m under the subkeys (r, E, k)."""
    return keyed2_encipher(keyed2_u(m, r, k), e)


def keyed2_row_value(schema_str: str, row: dict, key: bytes) -> bytes:
    """§16.6: the 32-byte row_v of a row (the subkeys derived for this row's schema)."""
    t, sd = _schema(schema_str)
    m = secure_row_bytes(t, row)
    r, e, k = keyed2_subkeys(key, sd, keyed2_key_words(len(m)))
    return keyed2_value_of_encoding(m, r, e, k)


def keyed2_digest(schema_str: str, rows: list, key: bytes) -> dict:
    """§16.6 for a table: the subkeys once, row_v per row, sum mod 2^256, final as §16.2 with "dsha-keyed-v2"."""
    t, sd = _schema(schema_str)
    encodings = [secure_row_bytes(t, row) for row in rows]
    r, e, k = keyed2_subkeys(key, sd, max([keyed2_key_words(len(m)) for m in encodings], default=2))
    values = [keyed2_value_of_encoding(m, r, e, k) for m in encodings]
    state = _state_int(KEYED2, values)
    return {"dsha": _final(KEYED2, sd, len(rows), state), "content_sum": content_sum_hex(KEYED2, state),
            "row_values": [v.hex() for v in values],
            "state": serialise_state(KEYED2, schema_str, len(rows), state).hex()}


def keyed2_key_id(key: bytes) -> str:
    """§16.6 (§12.1): the first 16 bytes of HMAC-SHA-256 under K of the ASCII text "dsha-keyed-v2 key id", hex."""
    check_key_length(key)
    return hmac.new(key, b"dsha-keyed-v2 key id", hashlib.sha256).digest()[:16].hex()


# -- §16.7 dsha-secure-v2 ------------------------------------------------------------------------------------

SECURE2_BLOCKS = 128  # §16.7: X_0 … X_127, 16 bytes each: 2048 bytes, 256 lanes


def aes128_block(key: bytes, block: bytes) -> bytes:
    """§16.7: AES-128 is FIPS 197 encryption of one 16-byte block under a 16-byte key."""
    if len(key) != 16 or len(block) != 16:
        raise ValueError(f"AES-128 takes a 16-byte key and a 16-byte block, not {len(key)} and {len(block)}")
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def counter16(j: int) -> bytes:
    """§16.7: ⟨j⟩, j as a 16-byte big-endian integer."""
    return j.to_bytes(16, "big")


def xor_bytes(x: bytes, y: bytes) -> bytes:
    """⊕ of two byte strings of one length."""
    if len(x) != len(y):
        raise ValueError("⊕ of byte strings of different lengths")
    return bytes(p ^ q for p, q in zip(x, y))


def secure2_keys(schema_digest: bytes):
    """§16.7 keys, once per table: T = SHA-256("dsha-secure-v2" (14 ASCII bytes) || schema_digest);
    K_1 = T[0, 16), K_2 = T[16, 32)."""
    t = hashlib.sha256(SECURE2.encode("ascii") + schema_digest).digest()
    return t[0:16], t[16:32]


def secure2_block(seed_bytes: bytes, j: int, k1: bytes, k2: bytes) -> bytes:
    """§16.7: X_j = AES-128_{K_1}(a ⊕ ⟨j⟩) ⊕ AES-128_{K_2}(b ⊕ ⟨j⟩), a = seed[0, 16), b = seed[16, 32)."""
    if len(seed_bytes) != 32 or not 0 <= j < SECURE2_BLOCKS:
        raise ValueError("a 32-byte seed and 0 <= j < 128")
    a, b = seed_bytes[0:16], seed_bytes[16:32]
    return xor_bytes(aes128_block(k1, xor_bytes(a, counter16(j))), aes128_block(k2, xor_bytes(b, counter16(j))))


def secure2_stream(seed_bytes: bytes, k1: bytes, k2: bytes) -> bytes:
    """§16.7: stream = X_0 || X_1 || … || X_127 (2048 bytes), block by block."""
    return b"".join(secure2_block(seed_bytes, j, k1, k2) for j in range(SECURE2_BLOCKS))


def secure2_lanes_of_stream(stream: bytes) -> List[int]:
    """§16.7: lane_i = u64le(stream[8i, 8i + 8)), i = 0 … 255."""
    if len(stream) != 8 * LANES2:
        raise ValueError(f"a stream of {len(stream)} bytes, not {8 * LANES2}")
    return [int.from_bytes(stream[8 * i:8 * i + 8], "little") for i in range(LANES2)]


def secure2_row_stream(schema_str: str, row: dict) -> bytes:
    """§16.7: the 2048-byte stream of one row (its seed as dsha-secure-v1's, §16.3; the keys of its schema)."""
    _, sd = _schema(schema_str)
    k1, k2 = secure2_keys(sd)
    return secure2_stream(seed(schema_str, row), k1, k2)


def secure2_table(schema_str: str, rows: list):
    """§16.7 for a table: (the rows' streams, in order; the state S_0 … S_255 as the integer of its 2048 bytes read
    little-endian). The keys are derived once."""
    _, sd = _schema(schema_str)
    k1, k2 = secure2_keys(sd)
    streams = [secure2_stream(seed(schema_str, r), k1, k2) for r in rows]
    return streams, _state_int(SECURE2, [secure2_lanes_of_stream(s) for s in streams])


def secure2_state(schema_str: str, rows: list) -> bytes:
    """§16.7 (§11.1): the serialised state of a table."""
    _, state = secure2_table(schema_str, rows)
    return serialise_state(SECURE2, schema_str, len(rows), state)


def secure2_digest(schema_str: str, rows: list) -> dict:
    """§16.7 for a table: the digest string and, to keep the vector file small, the SHA-256 of each row's stream, of
    the serialised state (§11.1) and of the content_sum text (4096 ASCII hex digits of the state bytes in order)."""
    _, sd = _schema(schema_str)
    streams, state = secure2_table(schema_str, rows)
    state_bytes = serialise_state(SECURE2, schema_str, len(rows), state)
    return {"dsha": _final(SECURE2, sd, len(rows), state),
            "row_streams_sha256": [hashlib.sha256(s).hexdigest() for s in streams],
            "state_sha256": hashlib.sha256(state_bytes).hexdigest(),
            "content_sum_sha256": hashlib.sha256(content_sum_hex(SECURE2, state).encode("ascii")).hexdigest()}


# -- golden vectors (SPEC §16.5) -------------------------------------------------------------------------------

def _vectors(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return {v["name"]: v for v in json.load(f)["vectors"]}


def compute(vector: dict, key: bytes) -> dict:
    return {"name": vector["name"], "secure": secure_digest(vector["schema"], vector["rows"]),
            "keyed": keyed_digest(vector["schema"], vector["rows"], key)}


def _fill(vectors_path: str, out: str, doc: dict, outputs) -> int:
    """Writes ``doc`` with ``outputs(vector)`` of every vector of vectors.json that applies (others are skipped)."""
    for name, v in _vectors(vectors_path).items():
        try:
            doc["vectors"].append(outputs(v))
        except (ValueError, ref.SchemaError) as e:
            print(f"skip {name}: {e}", file=sys.stderr)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(doc['vectors'])} vectors written to {out}")
    return 0


def cmd_fill(vectors_path: str, out: str, key_hex: str) -> int:
    key = bytes.fromhex(key_hex)
    doc = {"_doc": "SPEC.md §16.5: dsha-secure-v1 and dsha-keyed-v1 outputs of the vectors of vectors.json (by "
                   "name), under key_hex; written by tests/reference/dsha_reference_secure.py fill",
           "key_hex": key_hex, "vectors": []}
    return _fill(vectors_path, out, doc, lambda v: compute(v, key))


def cmd_check(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    vectors = _vectors(os.path.join(os.path.dirname(os.path.abspath(path)), "vectors.json"))
    key = bytes.fromhex(doc["key_hex"])
    bad = 0
    for expected in doc["vectors"]:
        actual = compute(vectors[expected["name"]], key)
        for part in ("secure", "keyed"):
            for field, value in expected[part].items():
                if actual[part][field] != value:
                    bad += 1
                    print(f"MISMATCH {expected['name']} {part}.{field}", file=sys.stderr)
    print(f"{len(doc['vectors'])} vectors checked, {bad} mismatches")
    return 1 if bad else 0


def compute_keyed2(vector: dict, key: bytes) -> dict:
    """§16.6: the dsha-keyed-v2 outputs of one vector of vectors.json."""
    return {"name": vector["name"], "keyed_v2": keyed2_digest(vector["schema"], vector["rows"], key)}


def cmd_fill_keyed2(vectors_path: str, out: str, key_hex: str) -> int:
    """Writes the dsha-keyed-v2 outputs of every vector of vectors.json to ``out``."""
    key = bytes.fromhex(key_hex)
    doc = {"_doc": "SPEC.md §16.6: dsha-keyed-v2 outputs of the vectors of vectors.json (by name), under "
                   "key_hex; written by tests/reference/dsha_reference_secure.py fill-keyed-v2",
           "key_hex": key_hex, "key_id": keyed2_key_id(key), "vectors": []}
    return _fill(vectors_path, out, doc, lambda v: compute_keyed2(v, key))


def cmd_check_keyed2(path: str) -> int:
    """Recomputes a file written by ``cmd_fill_keyed2`` against the vectors.json beside it."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    vectors = _vectors(os.path.join(os.path.dirname(os.path.abspath(path)), "vectors.json"))
    key = bytes.fromhex(doc["key_hex"])
    bad = 0
    if doc.get("key_id") != keyed2_key_id(key):
        bad += 1
        print("MISMATCH key_id", file=sys.stderr)
    for expected in doc["vectors"]:
        actual = compute_keyed2(vectors[expected["name"]], key)
        for field, value in expected["keyed_v2"].items():
            if actual["keyed_v2"].get(field) != value:
                bad += 1
                print(f"MISMATCH {expected['name']} keyed_v2.{field}", file=sys.stderr)
    print(f"{len(doc['vectors'])} vectors checked, {bad} mismatches")
    return 1 if bad else 0


def compute_secure2(vector: dict) -> dict:
    """§16.7: the dsha-secure-v2 outputs of one vector of vectors.json."""
    return {"name": vector["name"], "secure_v2": secure2_digest(vector["schema"], vector["rows"])}


def cmd_fill_secure2(vectors_path: str, out: str) -> int:
    """Writes the dsha-secure-v2 outputs of every vector of vectors.json to ``out``."""
    doc = {"_doc": "SPEC.md §16.7: dsha-secure-v2 outputs of the vectors of vectors.json (by name): dsha, and the "
                   "SHA-256 (hex) of each row's 2048-byte stream (row_streams_sha256, in the order of rows), of the "
                   "serialised state (§11.1: state_sha256) and of the 4096 ASCII hex digits of content_sum "
                   "(content_sum_sha256); written by tests/reference/dsha_reference_secure.py fill-secure-v2",
           "vectors": []}
    return _fill(vectors_path, out, doc, compute_secure2)


def cmd_check_secure2(path: str) -> int:
    """Recomputes a file written by ``cmd_fill_secure2`` against the vectors.json beside it."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    vectors = _vectors(os.path.join(os.path.dirname(os.path.abspath(path)), "vectors.json"))
    bad = 0
    for expected in doc["vectors"]:
        actual = compute_secure2(vectors[expected["name"]])
        if set(expected["secure_v2"]) != set(actual["secure_v2"]):
            bad += 1
            print(f"MISMATCH {expected['name']} secure_v2 fields {sorted(expected['secure_v2'])}", file=sys.stderr)
        for field, value in expected["secure_v2"].items():
            if actual["secure_v2"].get(field) != value:
                bad += 1
                print(f"MISMATCH {expected['name']} secure_v2.{field}", file=sys.stderr)
    print(f"{len(doc['vectors'])} vectors checked, {bad} mismatches")
    return 1 if bad else 0


def main(argv: List[str]) -> int:
    if len(argv) == 2 and argv[0] == "check":
        return cmd_check(argv[1])
    if len(argv) in (3, 5) and argv[0] == "fill":
        key_hex = argv[4] if len(argv) == 5 and argv[3] == "--key-hex" else bytes(range(32)).hex()
        return cmd_fill(argv[1], argv[2], key_hex)
    if len(argv) == 2 and argv[0] == "check-keyed-v2":
        return cmd_check_keyed2(argv[1])
    if len(argv) in (3, 5) and argv[0] == "fill-keyed-v2":
        if len(argv) == 5 and argv[3] != "--key-hex":
            print(__doc__, file=sys.stderr)
            return 2
        key_hex = argv[4] if len(argv) == 5 else bytes(range(32)).hex()
        return cmd_fill_keyed2(argv[1], argv[2], key_hex)
    if len(argv) == 2 and argv[0] == "check-secure-v2":
        return cmd_check_secure2(argv[1])
    if len(argv) == 3 and argv[0] == "fill-secure-v2":
        return cmd_fill_secure2(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
