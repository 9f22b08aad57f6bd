"""Physical layout does not reach the digest: the same logical data written as Parquet (dictionary, compression, row
group size, file count, decimal physical types; vectorized reader on and off), ORC, JSON and CSV (with an explicit
schema) reads back to one digest. The layouts are checked with pyarrow, so each case really differs on disk."""
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import harness
from harness import digest_of, mixed

ROWS = 20_000


@pytest.fixture(scope="module")
def table(spark):
    return mixed(spark, ROWS, 4).cache()


@pytest.fixture(scope="module")
def expected(spark, table):
    return digest_of(spark, table)


def files(path, suffix):
    found = sorted(p for p in path.rglob(f"*{suffix}") if not p.name.startswith((".", "_")))
    assert found, f"no {suffix} files in {path}"
    return found


PARQUET_CASES = {
    # name: (writer options, number of files, row groups per file: "one" or "many")
    "snappy-dict-large-1file": ({"compression": "snappy", "parquet.enable.dictionary": "true",
                                 "parquet.block.size": str(256 << 20)}, 1, "one"),
    "zstd-nodict-tiny-50files": ({"compression": "zstd", "parquet.enable.dictionary": "false",
                                  "parquet.block.size": "1024", "parquet.page.size": "512"}, 50, "many"),
    "none-dict-tiny-1file": ({"compression": "none", "parquet.enable.dictionary": "true",
                              "parquet.block.size": "1024", "parquet.page.size": "512"}, 1, "many"),
    "snappy-nodict-large-50files": ({"compression": "snappy", "parquet.enable.dictionary": "false"}, 50, "one"),
}


@pytest.mark.parametrize("case", sorted(PARQUET_CASES))
def test_parquet_writer_settings(spark, table, expected, tmp_path, case):
    options, nfiles, groups = PARQUET_CASES[case]
    tmp_path = tmp_path / "data"
    table.repartition(nfiles).write.options(**options).parquet(str(tmp_path))
    written = files(tmp_path, ".parquet")
    assert len(written) == nfiles
    meta = pq.ParquetFile(written[0]).metadata
    codec = meta.row_group(0).column(0).compression
    assert codec == {"snappy": "SNAPPY", "zstd": "ZSTD", "none": "UNCOMPRESSED"}[options["compression"]]
    if groups == "many":
        assert meta.num_row_groups > 1, "tiny parquet.block.size did not give several row groups"
    else:
        assert meta.num_row_groups == 1
    dict_used = any("DICTIONARY" in str(meta.row_group(0).column(i).encodings) for i in range(meta.num_columns))
    assert dict_used == (options.get("parquet.enable.dictionary", "true") == "true")
    for vectorized in ("true", "false"):
        with harness.sql_conf(spark, {"spark.sql.parquet.enableVectorizedReader": vectorized,
                                      "spark.sql.parquet.enableNestedColumnVectorizedReader": vectorized}):
            assert digest_of(spark, spark.read.parquet(str(tmp_path))) == expected


DECIMALS = ["CAST(id / 4 AS DECIMAL(9, 2)) AS d9", "CAST(id * 1000003 AS DECIMAL(18, 3)) AS d18",
            "CAST(id * 7919 AS DECIMAL(38, 10)) / 3 AS d38",
            "named_struct('x', CAST(-id AS DECIMAL(7, 1)), 'y', array(CAST(id AS DECIMAL(16, 4)))) AS nested"]


def test_decimal_physical_types(spark, tmp_path):
    """Compact decimals as INT32/INT64 (the default) versus FIXED_LEN_BYTE_ARRAY (writeLegacyFormat), top level and
    nested: one digest, equal to the in-memory one."""
    df = spark.range(0, 5000, 1, 3).selectExpr("id", *DECIMALS).selectExpr(
        "*", "CASE WHEN id % 7 = 0 THEN NULL ELSE -d18 END AS d18n")
    digests, physical = {}, {}
    for legacy in ("false", "true"):
        path = tmp_path / f"legacy-{legacy}"
        with harness.sql_conf(spark, {"spark.sql.parquet.writeLegacyFormat": legacy}):
            df.write.parquet(str(path))
        schema = pq.ParquetFile(files(path, ".parquet")[0]).schema
        physical[legacy] = {schema.column(i).path: schema.column(i).physical_type for i in range(len(schema))}
        digests[legacy] = digest_of(spark, spark.read.parquet(str(path)))
    new, old = physical["false"], physical["true"]
    assert new["d9"] == "INT32" and new["d18"] == "INT64" and new["d38"] == "FIXED_LEN_BYTE_ARRAY"
    assert new["nested.x"] == "INT32"
    assert old["d9"] == old["d18"] == old["nested.x"] == "FIXED_LEN_BYTE_ARRAY"
    assert digests["false"] == digests["true"] == digest_of(spark, df)


@pytest.mark.parametrize("compression", ["zlib", "snappy", "zstd", "none"])
def test_orc(spark, table, expected, tmp_path, compression):
    tmp_path = tmp_path / "data"
    table.repartition(3).write.option("compression", compression).orc(str(tmp_path))
    written = files(tmp_path, ".orc")
    assert po.ORCFile(written[0]).compression == {"none": "UNCOMPRESSED"}.get(compression, compression.upper())
    for vectorized in ("true", "false"):
        with harness.sql_conf(spark, {"spark.sql.orc.enableVectorizedReader": vectorized,
                                      "spark.sql.orc.enableNestedColumnVectorizedReader": vectorized}):
            assert digest_of(spark, spark.read.orc(str(tmp_path))) == expected


TS_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"  # the default keeps milliseconds only


def test_json_with_explicit_schema(spark, table, expected, tmp_path):
    """JSON keeps every column of the table (nested ones too) when read back with the schema."""
    tmp_path = tmp_path / "data"
    table.repartition(7).write.option("timestampFormat", TS_FORMAT).json(str(tmp_path))
    back = spark.read.schema(table.schema).option("timestampFormat", TS_FORMAT).json(str(tmp_path))
    assert digest_of(spark, back) == expected


def test_csv_with_explicit_schema(spark, table, tmp_path):
    """CSV: the flat columns (CSV has no nested types)."""
    flat = table.select("id", "i", "d", "s", "dec", "dt", "ts", "b")
    tmp_path = tmp_path / "data"
    flat.repartition(5).write.option("header", "true").option("timestampFormat", TS_FORMAT).csv(str(tmp_path))
    back = (spark.read.schema(flat.schema).option("header", "true").option("timestampFormat", TS_FORMAT)
            .csv(str(tmp_path)))
    assert digest_of(spark, back) == digest_of(spark, flat)


def test_all_formats_agree_on_one_digest(spark, tmp_path):
    """The same small table through every format, compared with each other (not only with the source)."""
    flat = spark.range(0, 3000, 1, 2).selectExpr("id", "CAST(id % 13 AS INT) AS k", "concat('v', id) AS s",
                                                 "CAST(id AS DECIMAL(12, 2)) / 3 AS amount")
    got = {}
    for fmt in ("parquet", "orc", "json", "csv"):
        path = str(tmp_path / fmt)
        flat.repartition(4).write.mode("overwrite").option("header", "true").format(fmt).save(path)
        got[fmt] = digest_of(spark, spark.read.format(fmt).schema(flat.schema).option("header", "true").load(path))
    assert len(set(got.values())) == 1, got
