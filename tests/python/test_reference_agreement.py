"""The engine and the independent reference implementation of SPEC.md agree on random tables.

Hypothesis generates rows for a fixed schema covering the common types; the same rows go to Spark (as a DataFrame)
and to tests/reference/dsha_reference.py (as SPEC §10 JSON). Digests, row digests and the content sum must match.
"""
import datetime
import decimal
import os
import sys

from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BinaryType, DateType, DecimalType, DoubleType, IntegerType, LongType,
                               MapType, StringType, StructField, StructType, TimestampType)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import dsha_reference  # noqa: E402

EPOCH_DATE = datetime.date(1970, 1, 1)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

SCHEMA = StructType([
    StructField("id", LongType()),
    StructField("n", IntegerType()),
    StructField("name", StringType()),
    StructField("x", DoubleType()),
    StructField("price", DecimalType(10, 2)),
    StructField("big", DecimalType(38, 10)),
    StructField("day", DateType()),
    StructField("ts", TimestampType()),
    StructField("raw", BinaryType()),
    StructField("tags", ArrayType(StringType())),
    StructField("attrs", MapType(StringType(), IntegerType())),
    StructField("point", StructType([StructField("y", DoubleType()), StructField("label", StringType())])),
])
CANONICAL = ('struct<"attrs":map<string,int>,"big":decimal(38,10),"day":date,"id":bigint,"n":int,"name":string,'
             '"point":struct<"label":string,"y":double>,"price":decimal(10,2),"raw":binary,"tags":array<string>,'
             '"ts":timestamp,"x":double>')


def nullable(s):
    return st.one_of(st.none(), s)


texts = st.text(max_size=6)
doubles = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0]))
rows = st.lists(st.fixed_dictionaries({
    "id": nullable(st.integers(-2**63, 2**63 - 1)),
    "n": nullable(st.integers(-2**31, 2**31 - 1)),
    "name": nullable(texts),
    "x": nullable(doubles),
    "price": nullable(st.decimals(min_value=-10**7, max_value=10**7, places=2, allow_nan=False)),
    "big": nullable(st.decimals(min_value=-10**27, max_value=10**27, places=10, allow_nan=False)),
    "day": nullable(st.dates(min_value=datetime.date(1, 1, 1))),
    "ts": nullable(st.datetimes(min_value=datetime.datetime(1900, 1, 1), timezones=st.just(datetime.timezone.utc))),
    "raw": nullable(st.binary(max_size=5)),
    "tags": nullable(st.lists(nullable(texts), max_size=3)),
    "attrs": nullable(st.dictionaries(texts, nullable(st.integers(-5, 5)), max_size=3)),
    "point": nullable(st.fixed_dictionaries({"y": nullable(doubles), "label": nullable(texts)})),
}), max_size=12)


def to_spec_json(row):
    """A generated row in the JSON conventions of SPEC §10."""
    def dbl(x):
        if x is None:
            return None
        if x != x:
            return "NaN"
        if x in (float("inf"), float("-inf")):
            return "Infinity" if x > 0 else "-Infinity"
        return "-0.0" if x == 0 and str(x).startswith("-") else x

    def micros(t):
        d = t - EPOCH
        return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds

    out = dict(row)
    out["x"] = dbl(row["x"])
    out["price"] = None if row["price"] is None else format(row["price"], "f")  # plain notation, never 0E-10
    out["big"] = None if row["big"] is None else format(row["big"], "f")
    out["day"] = None if row["day"] is None else (row["day"] - EPOCH_DATE).days
    out["ts"] = None if row["ts"] is None else micros(row["ts"])
    out["raw"] = None if row["raw"] is None else row["raw"].hex()
    out["attrs"] = None if row["attrs"] is None else [[k, v] for k, v in row["attrs"].items()]
    out["point"] = None if row["point"] is None else {"y": dbl(row["point"]["y"]), "label": row["point"]["label"]}
    return out


def to_spark_row(row):
    r = dict(row)
    if r["point"] is not None:
        r["point"] = (r["point"]["y"], r["point"]["label"])
    return tuple(r[f.name] for f in SCHEMA.fields)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows)
def test_engine_matches_reference_implementation(spark, data):
    expected = dsha_reference.table_digest(CANONICAL, [to_spec_json(r) for r in data])
    df = spark.createDataFrame([to_spark_row(r) for r in data], SCHEMA).repartition(2)
    fp = df.agg(F.call_function("dsha_fingerprint", F.col("*")).alias("f")).select("f.*").first()
    assert fp.schema == CANONICAL
    assert fp.content_sum == expected["content_sum"]
    assert fp.rows == len(data)
    assert fp.digest == expected["digest"]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows, st.binary(min_size=16, max_size=40))
def test_secure_and_keyed_digests_match_the_reference(spark, data, key):
    """SPEC §16 on random tables (maps in any entry order, structs, NaN, nulls): Spark against
    tests/reference/dsha_reference_secure.py, the keyed digest under a random key."""
    import dsha_reference_secure

    from dsha.functions import dsha_keyed_fingerprint, dsha_secure

    spec_rows = [to_spec_json(r) for r in data]
    df = spark.createDataFrame([to_spark_row(r) for r in data], SCHEMA).repartition(2)
    got = df.agg(dsha_secure("*").alias("s"), dsha_keyed_fingerprint(key, "*").alias("k")).first()
    assert got.s == dsha_reference_secure.secure_digest(CANONICAL, spec_rows)["dsha"]
    keyed = dsha_reference_secure.keyed_digest(CANONICAL, spec_rows, key)
    assert got.k.content_sum == keyed["content_sum"]
    assert got.k.digest == keyed["dsha"]
