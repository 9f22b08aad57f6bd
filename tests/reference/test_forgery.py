"""dsha-v1 is forgeable (SPEC.md §8): tests/python/forgery.py inverts MurmurHash3 to build two different tables with
one dsha-v1 digest; the independent reference implementation confirms the digests, and the secure algorithms of
SPEC §16 tell them apart (tests/python/test_secure_forgery.py does the same in Spark)."""
import os
import random
import sys
import time

import mmh3

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import forgery  # noqa: E402
import dsha_reference as ref  # noqa: E402


def test_the_murmur3_inversion_is_exact_for_random_targets():
    rng = random.Random(7)
    for _ in range(50):
        prefix = bytes(rng.randrange(256) for _ in range(16 * rng.randrange(1, 5)))
        target = bytes(rng.randrange(256) for _ in range(16))
        block = forgery.solve_last_block(prefix, target)
        assert mmh3.hash_bytes(prefix + block, 0, x64arch=True) == target
        assert forgery.murmur3_x64_128(prefix + block) == target


def test_two_different_tables_with_one_dsha_v1_digest_in_well_under_a_second():
    started = time.perf_counter()
    a, b = forgery.colliding_tables()
    assert time.perf_counter() - started < 1.0
    assert sorted(a) != sorted(b) and not set(a) & set(b) and len(a) == len(b)
    rows = lambda values: [{"b": v.hex()} for v in values]  # noqa: E731
    da, db = ref.table_digest(forgery.SCHEMA, rows(a)), ref.table_digest(forgery.SCHEMA, rows(b))
    assert da["digest"] == db["digest"] and da["rows"] == db["rows"] == 3
    for v in a + b:
        assert ref.row_digest(forgery.SCHEMA, {"b": v.hex()}) == forgery.row_digest(v)
