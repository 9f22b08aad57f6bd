#!/usr/bin/env python3
"""Reference implementation of SPEC.md §16: dsha-keyed-v1 and dsha-secure-v1, in plain Python (hashlib, hmac and
the PyPI package ``cryptography`` for AES-256), on top of the v1 reference (canonical schema, leaf encodings, states).

    python dsha_reference_secure.py check tests/golden/vectors-secure.json
    python dsha_reference_secure.py fill tests/golden/vectors.json OUT.json [--key-hex HEX]
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
CODES = {KEYED: 0x3D5A10, SECURE: 0x3D5A20}
STATE_BYTES = {KEYED: 32, SECURE: 4096}
LANES = 512
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
    """A key written as text (§16.2): hex if valid hex, else base64 (standard or URL-safe, padding optional)."""
    t = text.strip()
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

def _state_int(algorithm: str, values) -> int:
    """The combiner state as the integer of its bytes read little-endian."""
    if algorithm == KEYED:
        return sum(int.from_bytes(v, "little") for v in values) % (1 << 256)
    lanes = [0] * LANES
    for v in values:
        lanes = [(a + b) % M64 for a, b in zip(lanes, v)]
    return int.from_bytes(struct.pack(f"<{LANES}Q", *lanes), "little")


def _final(algorithm: str, sd: bytes, rows: int, state: int) -> str:
    final = hashlib.sha256(algorithm.encode("ascii") + sd + struct.pack("<Q", rows)
                           + state.to_bytes(STATE_BYTES[algorithm], "little")).digest()
    return "f" + (ref.varint(CODES[algorithm]) + ref.varint(32) + final).hex()


def content_sum_hex(algorithm: str, state: int) -> str:
    if algorithm == KEYED:
        return format(state, "064x")
    return state.to_bytes(4096, "little").hex()


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
    return {"algorithm": algorithm, "schema_digest": sd, "rows": rows, "state": state, "schema": text.decode()}


def merge_states(a: bytes, b: bytes) -> bytes:
    x, y = parse_state(a), parse_state(b)
    if x["algorithm"] != y["algorithm"] or x["schema_digest"] != y["schema_digest"]:
        raise ValueError("states of different algorithms or schemas")
    alg = x["algorithm"]
    if alg == KEYED:
        state = (x["state"] + y["state"]) % (1 << 256)
    else:
        la = struct.unpack(f"<{LANES}Q", x["state"].to_bytes(4096, "little"))
        lb = struct.unpack(f"<{LANES}Q", y["state"].to_bytes(4096, "little"))
        state = int.from_bytes(struct.pack(f"<{LANES}Q", *[(p + q) % M64 for p, q in zip(la, lb)]), "little")
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


# -- golden vectors (SPEC §16.5) -------------------------------------------------------------------------------

def _vectors(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return {v["name"]: v for v in json.load(f)["vectors"]}


def compute(vector: dict, key: bytes) -> dict:
    return {"name": vector["name"], "secure": secure_digest(vector["schema"], vector["rows"]),
            "keyed": keyed_digest(vector["schema"], vector["rows"], key)}


def cmd_fill(vectors_path: str, out: str, key_hex: str) -> int:
    key = bytes.fromhex(key_hex)
    doc = {"_doc": "SPEC.md §16.5: dsha-secure-v1 and dsha-keyed-v1 outputs of the vectors of vectors.json (by "
                   "name), under key_hex; written by tests/reference/dsha_reference_secure.py fill",
           "key_hex": key_hex, "vectors": []}
    for name, v in _vectors(vectors_path).items():
        try:
            doc["vectors"].append(compute(v, key))
        except (ValueError, ref.SchemaError) as e:
            print(f"skip {name}: {e}", file=sys.stderr)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(doc['vectors'])} vectors written to {out}")
    return 0


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


def main(argv: List[str]) -> int:
    if len(argv) == 2 and argv[0] == "check":
        return cmd_check(argv[1])
    if len(argv) in (3, 5) and argv[0] == "fill":
        key_hex = argv[4] if len(argv) == 5 and argv[3] == "--key-hex" else bytes(range(32)).hex()
        return cmd_fill(argv[1], argv[2], key_hex)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
