"""The reference implementation of SPEC.md §16 (dsha_reference_secure.py) against known answers and its own rules."""
import hashlib
import hmac
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import dsha_reference as ref
import dsha_reference_secure as sec

MAP_SCHEMA = 'struct<"m":map<int,string>>'


def test_aes_256_known_answer_fips_197_c3():
    enc = Cipher(algorithms.AES(bytes(range(32))), modes.ECB()).encryptor()
    out = enc.update(bytes.fromhex("00112233445566778899aabbccddeeff")) + enc.finalize()
    assert out.hex() == "8ea2b7ca516745bfeafc49904b496089"


def test_the_spec_map_example_bytes():
    t = ref.parse_schema(MAP_SCHEMA)
    encoded = sec.secure_row_bytes(t, {"m": [[2, None], [1, "a"]]})
    assert encoded.hex() == "01" + "02000000" + "0b000000" + "0101000000" + "010100000061" + "06000000" + "010200000000"


def test_secure_encoding_equals_v1_without_maps_and_ignores_entry_order():
    schema = 'struct<"a":int,"s":array<string>>'
    t = ref.parse_schema(schema)
    row = {"a": 5, "s": ["x", None, ""]}
    assert sec.secure_row_bytes(t, row) == ref.row_bytes(t, row)
    a = sec.seed(MAP_SCHEMA, {"m": [[1, "a"], [2, "b"], [3, None]]})
    b = sec.seed(MAP_SCHEMA, {"m": [[3, None], [1, "a"], [2, "b"]]})
    c = sec.seed(MAP_SCHEMA, {"m": [[1, "b"], [2, "a"], [3, None]]})
    assert a == b != c


def test_keyed_row_mac_is_hmac_sha256_of_schema_digest_and_row():
    key = bytes(range(32))
    t = ref.parse_schema('struct<"a":int>')
    sd = hashlib.sha256(t.render().encode()).digest()
    expected = hmac.new(key, sd + b"\x01" + (7).to_bytes(4, "little"), hashlib.sha256).digest()
    assert sec.row_mac('struct<"a":int>', {"a": 7}, key) == expected


def test_duplicates_count_and_states_merge_to_the_whole():
    schema = 'struct<"a":int,"m":map<int,string>>'
    rng = random.Random(3)
    rows = [{"a": rng.randrange(5), "m": [[1, "x"]] if rng.random() < 0.5 else None} for _ in range(9)]
    key = bytes(range(16, 48))
    for digest in (lambda r: sec.keyed_digest(schema, r, key), lambda r: sec.secure_digest(schema, r)):
        assert digest(rows)["dsha"] != digest(rows + rows[:1])["dsha"]
        assert digest(rows)["dsha"] == digest(list(reversed(rows)))["dsha"]
    for alg in (sec.KEYED, sec.SECURE):
        def state(part):
            values = ([sec.row_mac(schema, r, key) for r in part] if alg == sec.KEYED
                      else [sec.lanes_of_seed(sec.seed(schema, r)) for r in part])
            return sec.serialise_state(alg, schema, len(part), sec._state_int(alg, values))
        merged = sec.merge_states(state(rows[:4]), state(rows[4:]))
        assert merged == state(rows)
        whole = sec.keyed_digest(schema, rows, key) if alg == sec.KEYED else sec.secure_digest(schema, rows)
        assert sec.finalise_state(merged) == whole["dsha"]


def test_prefixes_and_bad_states():
    schema = 'struct<"a":int>'
    assert sec.secure_digest(schema, [{"a": 1}])["dsha"].startswith("fa0b4f50120")
    assert sec.keyed_digest(schema, [{"a": 1}], bytes(16))["dsha"].startswith("f90b4f50120")
    good = sec.serialise_state(sec.KEYED, schema, 1, 5)
    bad_width = good.replace(b"\x20\x00\x00\x00\x05", b"\x10\x00\x00\x00\x05")
    with pytest.raises(ValueError, match="has 32 bytes, not 16"):
        sec.parse_state(bad_width)
    with pytest.raises(ValueError, match="unknown algorithm code 0x3d5a01"):
        sec.parse_state(ref.serialise_state(schema, 1, 5))


def test_key_text_rules():
    key = bytes(range(32))
    import base64
    assert sec.parse_key(key.hex().upper()) == key
    assert sec.parse_key(base64.b64encode(key).decode()) == key
    assert sec.parse_key(base64.urlsafe_b64encode(key).decode().rstrip("=")) == key
    with pytest.raises(ValueError) as short:
        sec.parse_key("00112233445566778899")
    assert "at least 16" in str(short.value) and "0011223344" not in str(short.value)
