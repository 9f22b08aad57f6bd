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
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


def digest(df):
    return df.agg(dsha_agg("*")).first()[0]


@PROPERTY
@given(tables, st.randoms(use_true_random=False))
def test_invariances(spark, data, rnd):
    df = spark.createDataFrame(data, SCHEMA)
    base = digest(df)
    shuffled = list(data)
    rnd.shuffle(shuffled)
    assert digest(spark.createDataFrame(shuffled, SCHEMA)) == base
    assert digest(df.repartition(5)) == base
    assert digest(df.coalesce(1)) == base
    assert digest(df.select(*reversed(df.columns))) == base


@PROPERTY
@given(tables, st.integers(0, 10**6))
def test_mutations(spark, data, pick):
    df = spark.createDataFrame(data, SCHEMA)
    base = digest(df)
    i = pick % len(data)
    changed = list(data)
    changed[i] = (data[i][0] ^ 1,) + data[i][1:] if (data[i][0] ^ 1) not in {r[0] for r in data} else \
        (data[i][0],) + data[i][1:6] + ((data[i][6] or "") + "!",) + data[i][7:]
    assert digest(spark.createDataFrame(changed, SCHEMA)) != base, "changed cell"
    assert digest(spark.createDataFrame(data[:i] + data[i + 1:], SCHEMA)) != base, "dropped row"
    assert digest(spark.createDataFrame(data + [data[i]], SCHEMA)) != base, "duplicated row"


PARQUET_SETTINGS = [
    {"compression": "snappy"},
    {"compression": "zstd", "parquet.enable.dictionary": "false"},
    {"compression": "none", "parquet.block.size": "4096", "parquet.page.size": "1024"},
]


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="writes local files; classic only")
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
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
