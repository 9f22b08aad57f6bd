"""Hypothesis properties over generated DataFrames (nested structs, arrays, maps, decimals, timestamps, nulls):
what must keep the digest and what must change it."""
import datetime
import decimal
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, DateType, DecimalType, DoubleType, IntegerType, LongType, MapType,
                               StringType, StructField, StructType, TimestampType)

from dsha.functions import dsha as dsha_agg
from conftest import PASS_MODES

SCHEMA = StructType([
    StructField("id", LongType()),
    StructField("amount", DecimalType(38, 6)),
    StructField("price", DecimalType(9, 2)),
    StructField("at", TimestampType()),
    StructField("day", DateType()),
    StructField("x", DoubleType()),
    StructField("name", StringType()),
    StructField("tags", ArrayType(StringType())),
    StructField("scores", MapType(StringType(), IntegerType())),
    StructField("info", StructType([StructField("b", IntegerType()), StructField("a", ArrayType(LongType()))])),
])


def opt(s):
    return st.one_of(st.none(), s)


row = st.tuples(
    st.integers(-2**63, 2**63 - 1),
    opt(st.decimals(min_value=-10**31, max_value=10**31, places=6, allow_nan=False)),
    opt(st.decimals(min_value=-10**6, max_value=10**6, places=2, allow_nan=False)),
    opt(st.datetimes(min_value=datetime.datetime(1000, 1, 1), timezones=st.just(datetime.timezone.utc))),
    opt(st.dates()),
    opt(st.floats(allow_nan=False)),
    opt(st.text(max_size=8)),
    opt(st.lists(opt(st.text(max_size=3)), max_size=3)),
    opt(st.dictionaries(st.text(max_size=3), opt(st.integers(-100, 100)), max_size=3)),
    opt(st.tuples(opt(st.integers(-10, 10)), opt(st.lists(st.integers(0, 9), max_size=3)))),
)
tables = st.lists(row, min_size=2, max_size=25, unique_by=lambda r: r[0])
PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


def digest(df):
    return df.agg(dsha_agg("*")).first()[0]


def digests_of(variants):
    """dsha(*) of each DataFrame (same schema), computed in one Spark job by grouping a union on a tag column."""
    tagged = None
    for i, v in enumerate(variants):
        t = v.withColumn("_variant", F.lit(i))
        tagged = t if tagged is None else tagged.unionByName(t)
    cols = [c for c in variants[0].columns]
    rows = tagged.groupBy("_variant").agg(dsha_agg(*cols).alias("d"), dsha_agg(*reversed(cols)).alias("r")).collect()
    by_tag = {r["_variant"]: (r["d"], r["r"]) for r in rows}
    for d, r in by_tag.values():
        assert d == r, "column order changed a digest"
    return [by_tag[i][0] for i in range(len(variants))]


@PROPERTY
@given(tables, st.randoms(use_true_random=False))
def test_invariances(spark, in_codegen_mode, data, rnd):
    df = spark.createDataFrame(data, SCHEMA)
    shuffled = list(data)
    rnd.shuffle(shuffled)
    variants = [df, spark.createDataFrame(shuffled, SCHEMA), df.repartition(5), df.coalesce(1)]
    digests = digests_of(variants)
    assert len(set(digests)) == 1
    # Generated code, the interpreted path and the row-bytes step encode every type alike.
    for mode in PASS_MODES:
        with in_codegen_mode(mode):
            assert digest(df.repartition(3)) == digests[0], mode


@PROPERTY
@given(tables, st.integers(0, 10**6))
def test_mutations(spark, data, pick):
    i = pick % len(data)
    changed = list(data)
    changed[i] = (data[i][0] ^ 1,) + data[i][1:] if (data[i][0] ^ 1) not in {r[0] for r in data} else \
        (data[i][0],) + data[i][1:6] + ((data[i][6] or "") + "!",) + data[i][7:]
    variants = [data, changed, data[:i] + data[i + 1:], data + [data[i]]]
    base, *mutated = digests_of([spark.createDataFrame(v, SCHEMA) for v in variants])
    assert base not in mutated, "a changed cell, a dropped row or a duplicated row kept the digest"
    assert len(set(mutated)) == 3


PARQUET_SETTINGS = [
    {"compression": "snappy"},
    {"compression": "zstd", "parquet.enable.dictionary": "false"},
    {"compression": "none", "parquet.block.size": "4096", "parquet.page.size": "1024"},
]


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="writes local files; classic only")
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(tables)
def test_parquet_round_trips_keep_the_digest(spark, tmp_path_factory, data):
    df = spark.createDataFrame(data, SCHEMA)
    base = digest(df)
    root = tmp_path_factory.mktemp("parquet")
    for n, options in enumerate(PARQUET_SETTINGS):
        for files in (1, 4):
            path = str(root / f"s{n}_{files}")
            df.repartition(files).write.options(**options).parquet(path)
            assert digest(spark.read.parquet(path)) == base, (options, files)
