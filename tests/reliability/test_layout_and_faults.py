"""The digest is a property of the logical data: file formats, Parquet settings, decimal storage, AQE and shuffle
partitioning, and task retries do not change it."""
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from dsha.functions import dsha as dsha_agg


def digest(df):
    return df.agg(dsha_agg("*")).first()[0]


@pytest.fixture(scope="module")
def table(spark):
    return spark.range(2000).select(
        F.col("id"),
        (F.col("id") % 97).cast("int").alias("k"),
        F.concat(F.lit("name-"), (F.col("id") % 13).cast("string")).alias("name"),
        (F.col("id") / 7).cast("decimal(9,2)").alias("d9"),
        (F.col("id") * 1000003).cast("decimal(18,3)").alias("d18"),
        (F.col("id") * 7919).cast("decimal(30,4)").alias("d30"),
        F.when(F.col("id") % 5 == 0, None).otherwise(F.col("id") * 0.5).alias("x"),
        F.date_add(F.lit("2000-01-01").cast("date"), (F.col("id") % 3000).cast("int")).alias("day"),
    )


@pytest.mark.parametrize("fmt", ["parquet", "orc", "json", "csv"])
def test_formats_give_one_digest(spark, table, tmp_path, fmt):
    path = str(tmp_path / fmt)
    writer = table.repartition(5).write.format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    writer.save(path)
    back = spark.read.format(fmt).schema(table.schema).option("header", "true").load(path)
    assert digest(back) == digest(table)


@pytest.mark.parametrize("options,files", [
    ({"compression": "snappy"}, 1),
    ({"compression": "zstd", "parquet.enable.dictionary": "false"}, 50),
    ({"compression": "none", "parquet.block.size": "2048", "parquet.page.size": "512"}, 3),
])
def test_parquet_settings_give_one_digest(spark, table, tmp_path, options, files):
    path = str(tmp_path / "p")
    table.repartition(files).write.options(**options).parquet(path)
    assert digest(spark.read.parquet(path)) == digest(table)


def test_decimal_physical_types_give_one_digest(spark, table, tmp_path):
    digests, physical = [], set()
    for legacy in ("false", "true"):  # INT32/INT64 versus FIXED_LEN_BYTE_ARRAY for small precisions
        spark.conf.set("spark.sql.parquet.writeLegacyFormat", legacy)
        path = tmp_path / f"legacy-{legacy}"
        table.select("id", "d9", "d18", "d30").coalesce(1).write.parquet(str(path))
        spark.conf.unset("spark.sql.parquet.writeLegacyFormat")
        schema = pq.ParquetFile(next(path.glob("*.parquet"))).schema
        physical |= {schema.column(i).physical_type for i in range(1, 4)}
        digests.append(digest(spark.read.parquet(str(path))))
    assert {"INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"} <= physical
    assert digests[0] == digests[1] == digest(table.select("id", "d9", "d18", "d30"))


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("partitions", [1, 7, 200])
def test_aqe_and_shuffle_partitions(spark, table, aqe, partitions):
    expected = digest(table)
    spark.conf.set("spark.sql.adaptive.enabled", aqe)
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        shuffled = table.repartition("k").join(table.select("id").distinct(), "id")
        assert digest(shuffled) == expected
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
        spark.conf.set("spark.sql.shuffle.partitions", "4")


def test_tasks_failing_on_their_first_attempt(spark, table):
    """Every task of the hashing stage fails once (attempt 0) and is retried: the digest is unchanged."""
    from pyspark import TaskContext

    @F.udf("bigint", useArrow=False)  # plain Python UDF: no Arrow needed in the workers
    def fail_first_attempt(v):
        if TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("injected failure on the first attempt")
        return v

    expected = digest(table)
    flaky = table.repartition(4).withColumn("id", fail_first_attempt("id"))
    assert digest(flaky) == expected
