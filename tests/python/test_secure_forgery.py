"""Why the tamper-evident digests exist: two different tables built to have one dsha-v1 digest (tests/python/forgery.py
inverts MurmurHash3) have one dsha digest in Spark too, and different dsha-secure-v1, dsha-secure-v2, dsha-keyed-v1 and
dsha-keyed-v2 digests."""
import os
import sys

from pyspark.sql.types import BinaryType, StructField, StructType

import dsha

sys.path.insert(0, os.path.dirname(__file__))
import forgery  # noqa: E402

SCHEMA = StructType([StructField("b", BinaryType())])
KEY = bytes(range(32))


def test_a_forged_table_fools_dsha_v1_but_neither_secure_digest(spark):
    a, b = forgery.colliding_tables()
    left = spark.createDataFrame([(bytearray(v),) for v in a], SCHEMA)
    right = spark.createDataFrame([(bytearray(v),) for v in b], SCHEMA)
    assert left.exceptAll(right).count() == 3  # not one row in common
    sql = lambda df, f: df.selectExpr(f).first()[0]  # noqa: E731
    assert sql(left, "dsha(b)") == sql(right, "dsha(b)")
    assert dsha.equal(left, right)  # dsha-v1 is fooled (SPEC.md §8)
    assert sql(left, "dsha_secure(b)") != sql(right, "dsha_secure(b)")
    assert sql(left, "dsha_secure_v2(b)") != sql(right, "dsha_secure_v2(b)")
    key_sql = f"dsha_keyed('{KEY.hex()}', b)"
    assert sql(left, key_sql) != sql(right, key_sql)
    assert dsha.fingerprint(left) == dsha.fingerprint(right)
    assert dsha.fingerprint(left, algorithm="secure") != dsha.fingerprint(right, algorithm="secure")
    assert dsha.fingerprint(left, algorithm="secure-v2") != dsha.fingerprint(right, algorithm="secure-v2")
    assert dsha.fingerprint(left, key=KEY) != dsha.fingerprint(right, key=KEY)
    assert dsha.fingerprint(left, key=KEY, algorithm="keyed-v2") != dsha.fingerprint(right, key=KEY, algorithm="keyed-v2")
    assert dsha.equal(left, right, algorithm="secure").reason == "content"
