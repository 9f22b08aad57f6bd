"""The reference implementation of SPEC.md §16.6 (dsha-keyed-v2; dsha_reference_secure.py) against second,
differently written computations of its parts and against its own rules."""
import hashlib
import hmac
import os
import random
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import dsha_reference as ref
import dsha_reference_secure as sec

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden")
KEY = bytes(range(32))
P = (1 << 127) - 1
SCHEMA = 'struct<"a":int,"s":string,"m":map<int,string>>'


def _sd(schema):
    return hashlib.sha256(ref.parse_schema(schema).render().encode()).digest()


def _rows(count, seed=7):
    rng = random.Random(seed)
    return [{"a": rng.choice([None, rng.randrange(-5, 5)]),
             "s": rng.choice([None, "", "x" * rng.randrange(40)]),
             "m": rng.choice([None, [[1, "a"], [2, None]], [[rng.randrange(9), "b" * rng.randrange(20)]]])}
            for _ in range(count)]


# -- a second NH: 32-bit limbs, schoolbook multiplication with carries, byte-level word assembly ------------------

def _word_from_bytes(b):
    value = 0
    for position, byte in enumerate(b):
        value |= byte << (8 * position)
    return value


def _add64(x, y):
    lo = (x & 0xFFFFFFFF) + (y & 0xFFFFFFFF)
    hi = ((x >> 32) + (y >> 32) + (lo >> 32)) & 0xFFFFFFFF
    return (hi << 32) | (lo & 0xFFFFFFFF)


def _mul64x64_limbs(x, y):
    """64x64 -> 128 bits from four 32x32 -> 64 partial products, as four 32-bit limbs."""
    xs, ys = [x & 0xFFFFFFFF, x >> 32], [y & 0xFFFFFFFF, y >> 32]
    limbs = [0, 0, 0, 0]
    for i in range(2):
        for j in range(2):
            product = xs[i] * ys[j]
            at = i + j
            carry = product
            while carry:
                total = limbs[at] + (carry & 0xFFFFFFFF)
                limbs[at] = total & 0xFFFFFFFF
                carry = (carry >> 32) + (total >> 32)
                at += 1
                if at == 4:
                    break
    return limbs


def _add128_limbs(acc, limbs):
    carry = 0
    out = []
    for a, b in zip(acc, limbs):
        total = a + b + carry
        out.append(total & 0xFFFFFFFF)
        carry = total >> 32
    return out  # the carry out of the top limb is dropped: mod 2^128


def _nh_limbs(m, k):
    padded = m + bytes(-len(m) % 16)
    words = [_word_from_bytes(padded[at:at + 8]) for at in range(0, len(padded), 8)]
    result = []
    for shift in (0, 2):
        acc = [0, 0, 0, 0]
        for i in range(0, len(words), 2):
            acc = _add128_limbs(acc, _mul64x64_limbs(_add64(words[i], k[i + shift]), _add64(words[i + 1], k[i + 1 + shift])))
        result.append(acc[0] | acc[1] << 32 | acc[2] << 64 | acc[3] << 96)
    return tuple(result)


@pytest.mark.parametrize("length", [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 257])
def test_nh_equals_a_32_bit_limb_computation(length):
    rng = random.Random(length)
    for trial in range(20):
        m = bytes(rng.choice([0, 255, rng.randrange(256)]) for _ in range(length))
        words = sec.keyed2_key_words(length)
        if trial == 0:
            k = [(1 << 64) - 1] * words  # every addition wraps
        else:
            k = [rng.choice([0, (1 << 64) - 1, rng.getrandbits(64)]) for _ in range(words)]
        assert sec.keyed2_nh(m, k) == _nh_limbs(m, k)
        if trial == 1 and length >= 16:
            # the maximal products: (2^64 - 1)^2 summed n times must wrap mod 2^128 in both
            ones = b"\xff" * length
            zeros = [0] * words
            assert sec.keyed2_nh(ones, zeros) == _nh_limbs(ones, zeros)


def test_nh_inside_row_value_is_the_second_computation():
    """keyed2_row_value = AES_E(u) || AES_E(u + 2^127) with u built from the limb NH: checked by decrypting."""
    rows = _rows(12)
    t = ref.parse_schema(SCHEMA)
    for row in rows:
        m = sec.secure_row_bytes(t, row)
        r, e, k = sec.keyed2_subkeys(KEY, _sd(SCHEMA), sec.keyed2_key_words(len(m)))
        nh0, nh1 = _nh_limbs(m, k)
        a = [nh0 & ((1 << 64) - 1), nh0 >> 64, nh1 & ((1 << 64) - 1), nh1 >> 64, len(m)]
        u = 0
        for coefficient in a:  # Horner: ((((a0 r + a1) r + a2) r + a3) r + a4) r
            u = (u + coefficient) * r % P
        value = sec.keyed2_row_value(SCHEMA, row, KEY)
        dec = Cipher(algorithms.AES(e), modes.ECB()).decryptor()
        plain = dec.update(value) + dec.finalize()
        assert plain == u.to_bytes(16, "little") + (u + (1 << 127)).to_bytes(16, "little")


def test_polynomial_equals_horner():
    rng = random.Random(11)
    cases = [([0] * 5, P - 1), ([(1 << 64) - 1] * 5, P - 1), ([1, 0, 0, 0, 0], 2), ([0, 0, 0, 0, 1], P - 1)]
    cases += [([rng.getrandbits(64) for _ in range(5)], rng.randrange(P)) for _ in range(200)]
    for a, r in cases:
        horner = 0
        for coefficient in a:
            horner = (horner + coefficient) * r % P
        assert sec.keyed2_poly(a, r) == horner
        assert 0 <= horner < P


def test_keystream_equals_aes_ctr_mode_with_nonce_zero():
    rng = random.Random(5)
    for length in (0, 1, 16, 48, 49, 4096 + 8):
        key = bytes(rng.randrange(256) for _ in range(32))
        enc = Cipher(algorithms.AES(key), modes.CTR(bytes(16))).encryptor()
        assert sec.aes256_ctr_stream(key, length) == enc.update(bytes(length)) + enc.finalize()


def test_subkeys_are_cut_from_the_ctr_stream_of_the_hmac_seed():
    sd = _sd(SCHEMA)
    words = 10
    r, e, k = sec.keyed2_subkeys(KEY, sd, words)
    seed = hmac.new(KEY, b"dsha-keyed-v2" + sd, hashlib.sha256).digest()
    enc = Cipher(algorithms.AES(seed), modes.CTR(bytes(16))).encryptor()
    stream = enc.update(bytes(48 + 8 * words)) + enc.finalize()
    assert r == (int.from_bytes(stream[:16], "little") & ((1 << 127) - 1)) % P and 0 <= r < P
    assert e == stream[16:48]
    assert k == [int.from_bytes(stream[48 + 8 * i:56 + 8 * i], "little") for i in range(words)]
    # a longer request extends, never changes, the key words
    assert sec.keyed2_subkeys(KEY, sd, 3)[2] == k[:3]


def test_empty_encoding_gives_zero_coefficients_and_u_zero():
    r, e, k = sec.keyed2_subkeys(KEY, _sd(SCHEMA), sec.keyed2_key_words(0))
    assert sec.keyed2_words(b"") == []
    assert sec.keyed2_nh(b"", k) == (0, 0)
    assert sec.keyed2_coefficients(0, 0, 0) == (0, 0, 0, 0, 0)
    assert sec.keyed2_u(b"", r, k) == 0
    assert sec.keyed2_value_of_encoding(b"", r, e, k) == sec.keyed2_encipher(0, e)
    assert sec.keyed2_encipher(0, e)[:16] == sec.aes256_block(e, bytes(16))


def test_encodings_differing_only_by_trailing_zero_bytes_differ():
    r, e, k = sec.keyed2_subkeys(KEY, _sd(SCHEMA), sec.keyed2_key_words(64))
    for m in (b"", b"\x01", b"\x01" * 15, b"\x01" * 16, b"\x01\x00\x00\x00\x05"):
        values = {sec.keyed2_value_of_encoding(m + bytes(z), r, e, k) for z in range(0, 17)}
        assert len(values) == 17
        # same NH (same padded words) when the block count does not change, separated by L alone
        if len(m) % 16:
            z = 16 - len(m) % 16
            assert sec.keyed2_nh(m, k) == sec.keyed2_nh(m + bytes(z), k)
            assert sec.keyed2_u(m, r, k) != sec.keyed2_u(m + bytes(z), r, k)


def test_a_key_shorter_than_16_bytes_is_rejected():
    with pytest.raises(ValueError, match="at least 16"):
        sec.parse_key("00112233445566778899")
    for function in (lambda key: sec.keyed2_row_value(SCHEMA, _rows(1)[0], key),
                     lambda key: sec.keyed2_digest(SCHEMA, [], key),
                     lambda key: sec.keyed2_subkeys(key, _sd(SCHEMA), 2),
                     sec.keyed2_key_id):
        with pytest.raises(ValueError, match="the key is 15 bytes; a key needs at least 16"):
            function(bytes(15))
    sec.keyed2_digest(SCHEMA, _rows(2), bytes(16))  # 16 bytes are enough


def test_split_states_merge_to_the_whole_and_finalise_to_the_digest():
    rows = _rows(20)

    def state(part):
        return bytes.fromhex(sec.keyed2_digest(SCHEMA, part, KEY)["state"])

    whole = sec.keyed2_digest(SCHEMA, rows, KEY)
    merged = sec.merge_states(state(rows[:7]), state(rows[7:]))
    assert merged == state(rows) == bytes.fromhex(whole["state"])
    assert sec.merge_states(state([]), state(rows)) == state(rows)
    parsed = sec.parse_state(merged)
    assert parsed["algorithm"] == sec.KEYED2 and parsed["rows"] == 20
    assert merged[:9] == b"DSHS\x01" + bytes.fromhex("91b4f501")
    assert sec.finalise_state(merged) == whole["dsha"]
    assert sec.content_sum_hex(sec.KEYED2, parsed["state"]) == whole["content_sum"] == format(parsed["state"], "064x")
    total = sum(int.from_bytes(bytes.fromhex(v), "little") for v in whole["row_values"]) % (1 << 256)
    assert parsed["state"] == total
    final = hashlib.sha256(b"dsha-keyed-v2" + _sd(SCHEMA) + (20).to_bytes(8, "little")
                           + total.to_bytes(32, "little")).hexdigest()
    assert whole["dsha"] == "f91b4f50120" + final
    with pytest.raises(ValueError, match="different algorithms"):
        sec.merge_states(merged, bytes.fromhex(sec.keyed_digest(SCHEMA, rows, KEY)["state"]))


def test_row_order_does_not_matter_and_duplicates_count():
    rows = _rows(15)
    digest = sec.keyed2_digest(SCHEMA, rows, KEY)["dsha"]
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    assert sec.keyed2_digest(SCHEMA, shuffled, KEY)["dsha"] == digest
    assert sec.keyed2_digest(SCHEMA, list(reversed(rows)), KEY)["dsha"] == digest
    assert sec.keyed2_digest(SCHEMA, rows + rows[:1], KEY)["dsha"] != digest
    assert sec.keyed2_digest(SCHEMA, rows, bytes(range(1, 33)))["dsha"] != digest
    # the per-row function and the table's once-per-table subkeys agree
    assert [sec.keyed2_row_value(SCHEMA, row, KEY).hex() for row in rows] == \
        sec.keyed2_digest(SCHEMA, rows, KEY)["row_values"]


def test_digest_prefix_and_key_id():
    assert sec.keyed2_digest('struct<"a":int>', [{"a": 1}], KEY)["dsha"].startswith("f91b4f50120")
    assert sec.keyed2_digest('struct<"a":int>', [], KEY)["dsha"].startswith("f91b4f50120")
    key_id = sec.keyed2_key_id(KEY)
    assert key_id == hmac.new(KEY, b"dsha-keyed-v2 key id", hashlib.sha256).hexdigest()[:32]
    assert key_id != hmac.new(KEY, b"dsha-keyed-v1 key id", hashlib.sha256).hexdigest()[:32]


def test_check_keyed_v2_of_the_filled_file_passes(tmp_path):
    path = os.path.join(GOLDEN, "vectors-keyed-v2.json")
    assert sec.cmd_check_keyed2(path) == 0
    script = os.path.join(HERE, "dsha_reference_secure.py")
    done = subprocess.run([sys.executable, script, "check-keyed-v2", path], capture_output=True, text=True)
    assert done.returncode == 0 and ", 0 mismatches" in done.stdout
    # and a damaged copy fails
    import json
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc["vectors"][0]["keyed_v2"]["dsha"] = "f91b4f50120" + "00" * 32
    copy = tmp_path / "vectors-keyed-v2.json"
    copy.write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "vectors.json").write_bytes(open(os.path.join(GOLDEN, "vectors.json"), "rb").read())
    assert sec.cmd_check_keyed2(str(copy)) == 1
