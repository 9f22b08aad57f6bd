"""Hostile and extreme input, each with its expected outcome: a clear AnalysisException, or a digest that behaves
(deterministic, equal where the data is logically equal, different where it is not)."""
import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import harness
from harness import CODEGEN_MODES, analysis_error, digest_of, fingerprint_of

MODES = sorted(CODEGEN_MODES)


def digests_in_both_modes(spark, query):
    """The digest of ``query`` in both codegen modes, asserted equal; returns it."""
    got = {}
    for mode in MODES:
        with harness.codegen(spark, mode):
            got[mode] = digest_of(spark, query)
    assert len(set(got.values())) == 1, got
    return got[MODES[0]]


# ------------------------------------------------------------------------------------------ errors

def test_unsupported_types_are_named(spark):
    """GEOMETRY/GEOGRAPHY (Spark 4.1+) are the SQL types dsha-v1 rejects; the error names the column and type."""
    from pyspark.errors import AnalysisException

    point = "X'0101000000000000000000F03F0000000000000040'"  # WKB POINT(1 2)
    try:
        spark.sql(f"SELECT st_geomfromwkb({point}) AS g").schema
    except AnalysisException as e:
        if "UNRESOLVED_ROUTINE" in str(e):
            pytest.skip(f"Spark {harness.pyspark.__version__} has no GEOMETRY/GEOGRAPHY type; ObjectType and the "
                        "other types dsha does not hash are not reachable from SQL")
        raise
    cases = [("geo_col", f"st_geomfromwkb({point})", "GEOMETRY")]
    try:
        spark.sql(f"SELECT st_geogfromwkb({point}) AS g").schema
        cases.append(("geog_col", f"st_geogfromwkb({point})", "GEOGRAPHY"))
    except AnalysisException:
        pass
    for name, expr, type_name in cases:
        for query in (f"SELECT dsha(*) FROM (SELECT 1 AS id, {expr} AS {name})",
                      f"SELECT logical_hash({name}) FROM (SELECT {expr} AS {name})",
                      f"SELECT dsha_fingerprint(*) FROM (SELECT {expr} AS {name})"):
            message = analysis_error(spark, query)
            assert "DATATYPE_MISMATCH" in message
            assert f"`{name}`" in message and type_name in message.upper(), message
        nested = analysis_error(spark, f"SELECT dsha(*) FROM (SELECT named_struct('inner', {expr}) AS outer_col)")
        assert "outer_col" in nested and type_name in nested.upper(), nested


def test_no_arguments(spark):
    for fn in ("dsha", "dsha_fingerprint", "logical_hash"):
        message = analysis_error(spark, f"SELECT {fn}() FROM range(3)")
        assert "at least one column" in message, message


def test_duplicate_column_names(spark):
    message = analysis_error(spark, "SELECT dsha(*) FROM (SELECT 1 AS a, 2 AS a)")
    assert "`a`" in message and "duplicate" in message, message
    message = analysis_error(spark, "SELECT dsha(*) FROM (SELECT named_struct('f', 1, 'f', 2) AS s)")
    assert "duplicate" in message and "`s" in message and "f" in message, message


# ------------------------------------------------------------------------------------------ wide and deep

def test_two_thousand_columns(spark):
    n = 2000
    cols = [f"CAST(id * {i} AS {'BIGINT' if i % 3 else 'STRING'}) AS c{i}" for i in range(n)]
    wide = spark.range(0, 50, 1, 2).selectExpr(*cols)
    permuted = wide.select(*[f"c{i}" for i in np.random.default_rng(7).permutation(n)])
    reversed_ = wide.select(*[f"c{i}" for i in reversed(range(n))])
    d = digest_of(spark, wide)
    assert digest_of(spark, permuted) == d == digest_of(spark, reversed_)
    assert fingerprint_of(spark, wide).rows == 50
    assert digest_of(spark, wide.drop("c1999")) != d


def _nested(kind, depth, leaf="id"):
    expr = leaf
    for k in range(depth):
        shape = kind if kind != "mixed" else ("struct", "array", "map")[k % 3]
        if shape == "struct":
            expr = f"named_struct('f{k}', {expr}, 'n', {k})"
        elif shape == "array":
            expr = f"array({expr}, NULL)"
        else:
            expr = f"map('k{k}', {expr})"
    return expr


@pytest.mark.parametrize("kind", ["struct", "array", "mixed"])
def test_nesting_depth_30(spark, kind):
    deep = f"SELECT id, {_nested(kind, 30)} AS deep FROM range(0, 200, 1, 2)"
    d = digests_in_both_modes(spark, deep)
    for mode in MODES:  # the row expression alone, too (expression codegen, not only the aggregate)
        with harness.codegen(spark, mode):
            rows = spark.sql(f"SELECT hex(logical_hash(id, deep)) AS h FROM ({deep}) ORDER BY id").collect()
            assert len({r.h for r in rows}) == 200
    shallower = f"SELECT id, {_nested(kind, 29)} AS deep FROM range(0, 200, 1, 2)"
    assert digest_of(spark, shallower) != d


def test_64_mb_string_cell(spark):
    """Built from a column, not a constant: Spark itself folds a constant repeat() into a 64 MB literal and then runs
    out of heap printing the plan (AdaptiveSparkPlanExec.onUpdatePlan -> explainString), before dsha runs."""
    size = 64 << 20
    n = "CAST(id AS INT)"  # 0, not foldable
    whole = digests_in_both_modes(spark, f"SELECT repeat('x', {size} + {n}) AS s FROM range(1)")
    halves = digest_of(spark, f"SELECT concat(repeat('x', {size // 2} + {n}), repeat('x', {size // 2})) AS s "
                              f"FROM range(1)")
    assert whole == halves
    assert digest_of(spark, f"SELECT concat(repeat('x', {size - 1} + {n}), 'y') AS s FROM range(1)") != whole
    assert fingerprint_of(spark, f"SELECT repeat('x', {size} + {n}) AS s FROM range(1)").rows == 1


# ------------------------------------------------------------------------------------------ empty and null

def test_empty_tables(spark, tmp_path):
    d = digest_of(spark, "SELECT 1 AS a WHERE false")
    assert digest_of(spark, "SELECT CAST(id AS INT) AS a FROM range(0)") == d  # stable, however produced
    assert digest_of(spark, "SELECT CAST(id AS INT) AS a FROM range(100) WHERE id < 0") == d
    spark.sql("SELECT 1 AS a WHERE false").write.parquet(str(tmp_path / "empty"))
    assert digest_of(spark, spark.read.parquet(str(tmp_path / "empty"))) == d
    fp = fingerprint_of(spark, "SELECT 1 AS a WHERE false")
    assert fp.rows == 0 and fp.digest == d
    others = {digest_of(spark, q) for q in ("SELECT CAST(1 AS BIGINT) AS a WHERE false",
                                            "SELECT 1 AS b WHERE false",
                                            "SELECT 1 AS a, 2 AS b WHERE false",
                                            "SELECT 'x' AS a WHERE false")}
    assert len(others) == 4 and d not in others
    assert digest_of(spark, "SELECT 1 AS a") != d


def test_empty_partitions(spark):
    sparse = spark.range(0, 1000, 1, 50).where("id % 100 < 3")  # 40 of the 50 partitions are empty
    assert sparse.rdd.glom().map(len).filter(lambda n: n == 0).count() == 40
    d = digest_of(spark, sparse)
    assert digest_of(spark, sparse.coalesce(1)) == d == digest_of(spark, sparse.repartition(200))
    empty = spark.range(0, 0, 1, 20)
    assert digest_of(spark, empty) == digest_of(spark, empty.coalesce(1)) == digest_of(spark, "SELECT id FROM range(0)")


def test_all_null_rows(spark):
    q = "SELECT CAST(NULL AS INT) AS a, CAST(NULL AS STRING) AS b, CAST(NULL AS ARRAY<INT>) AS c FROM range({})"
    by_count = {n: digest_of(spark, q.format(n)) for n in (0, 1, 2, 3)}
    assert len(set(by_count.values())) == 4, by_count  # no rows, one, two, three null rows all differ
    assert fingerprint_of(spark, q.format(3)).rows == 3
    assert digest_of(spark, f"{q.format(1)} UNION ALL {q.format(1)}") == by_count[2]
    # a null row differs from a row of empty values
    assert digest_of(spark, "SELECT 0 AS a, '' AS b, CAST(array() AS ARRAY<INT>) AS c") != by_count[1]


def test_content_sum_of_a_union_is_the_sum_of_the_parts(spark):
    """The digest is a function of the multiset: a table split any way adds up (mod 2^128) to the whole."""
    whole = fingerprint_of(spark, harness.mixed(spark, 30_000, 3))
    parts = [fingerprint_of(spark, harness.mixed(spark, 30_000, 3).where(f"id % 4 = {k}")) for k in range(4)]
    assert sum(int(p.content_sum, 16) for p in parts) % (1 << 128) == int(whole.content_sum, 16)
    assert sum(p.rows for p in parts) == whole.rows


# ------------------------------------------------------------------------------------------ extreme values

def test_extreme_integers_and_decimals(spark, tmp_path):
    values = {
        "long_min": "CAST(-9223372036854775808 AS BIGINT)", "long_max": "CAST(9223372036854775807 AS BIGINT)",
        "long_zero": "CAST(0 AS BIGINT)",
        "dec_max": "CAST('0.99999999999999999999999999999999999999' AS DECIMAL(38, 38))",
        "dec_min": "CAST('-0.99999999999999999999999999999999999999' AS DECIMAL(38, 38))",
        "dec_tiny": "CAST('0.00000000000000000000000000000000000001' AS DECIMAL(38, 38))",
        "dec_zero": "CAST(0 AS DECIMAL(38, 38))",
        "dec_big": "CAST('99999999999999999999999999999999999999' AS DECIMAL(38, 0))",
    }
    got = {k: digests_in_both_modes(spark, f"SELECT {v} AS x") for k, v in values.items()}
    assert len(set(got.values())) == len(got), got
    table = spark.sql("SELECT " + ", ".join(f"{v} AS {k}" for k, v in values.items()))
    table.write.parquet(str(tmp_path / "p"))
    table.write.orc(str(tmp_path / "o"))
    d = digest_of(spark, table)
    assert digest_of(spark, spark.read.parquet(str(tmp_path / "p"))) == d
    assert digest_of(spark, spark.read.orc(str(tmp_path / "o"))) == d


@pytest.mark.parametrize("t", ["DOUBLE", "FLOAT"])
def test_signed_zero_nan_infinity(spark, t):
    neg_zero = f"CAST('-0.0' AS {t})"
    assert spark.sql(f"SELECT CAST({neg_zero} AS STRING)").first()[0] == "-0.0"
    for wrap in ("{}", "array({})", "named_struct('f', {})", "map({}, 1)", "map(1, {})"):
        neg = digests_in_both_modes(spark, f"SELECT {wrap.format(neg_zero)} AS x")
        pos = digests_in_both_modes(spark, f"SELECT {wrap.format(f'CAST(0.0 AS {t})')} AS x")
        assert neg == pos, wrap
    special = {s: digest_of(spark, f"SELECT CAST('{s}' AS {t}) AS x")
               for s in ("NaN", "Infinity", "-Infinity", "0.0")}
    assert len(set(special.values())) == 4, special


def test_nan_payloads(spark, tmp_path):
    """NaNs with different bit patterns (quiet, signalling, negative, payloads) are one value. Written with pyarrow
    (Spark cannot make them); the files are checked to hold the distinct bit patterns."""
    double_bits = [0x7FF8000000000000, 0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001,
                   0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
    float_bits = [0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFFFFFFF]
    digests = set()
    for i, (db, fb) in enumerate(zip(double_bits, float_bits)):
        d = np.array([db], dtype=np.uint64).view(np.float64)
        f = np.array([fb], dtype=np.uint32).view(np.float32)
        path = tmp_path / f"nan{i}.parquet"
        pq.write_table(pa.table({"d": pa.array(d), "f": pa.array(f), "a": pa.array([list(d)])}), path)
        back = pq.read_table(path)
        assert struct.unpack("<Q", struct.pack("<d", back["d"][0].as_py()))[0] == db
        digests.add(digest_of(spark, spark.read.parquet(str(path))))
    assert len(digests) == 1, digests
    canonical = digest_of(spark, "SELECT CAST('NaN' AS DOUBLE) AS d, CAST('NaN' AS FLOAT) AS f, "
                                 "array(CAST('NaN' AS DOUBLE)) AS a")
    assert digests == {canonical}


def test_timestamps_and_dates_outside_1900_9999(spark, tmp_path):
    micros = {
        "before_1900": -2208988800000001,        # 1899-12-31 23:59:59.999999 UTC
        "year_1": -62135596800000000,            # 0001-01-01
        "before_year_1": -62135596800000001,
        "after_9999": 253402300800000000,        # 10000-01-01
        "long_min": -9223372036854775808,
        "long_max": 9223372036854775807,
    }
    ts = {k: digests_in_both_modes(spark, f"SELECT timestamp_micros({v}) AS t") for k, v in micros.items()}
    assert len(set(ts.values())) == len(ts), ts
    ntz = digests_in_both_modes(spark, "SELECT CAST(timestamp_micros(-62135596800000001) AS TIMESTAMP_NTZ) AS t")
    assert ntz not in ts.values()  # another type, another digest
    days = {"before_1900": -25568, "before_year_1": -719163, "after_9999": 2932897,
            "int_min": -2147483648, "int_max": 2147483647}
    ds = {k: digests_in_both_modes(spark, f"SELECT date_from_unix_date({v}) AS d") for k, v in days.items()}
    assert len(set(ds.values())) == len(ds), ds
    # through Parquet (no calendar rebasing: the proleptic Gregorian values round-trip)
    table = spark.sql(", ".join([f"SELECT timestamp_micros({micros['before_year_1']}) AS t"] + []) +
                      f", date_from_unix_date({days['before_year_1']}) AS d, "
                      f"timestamp_micros({micros['after_9999']}) AS t2, date_from_unix_date({days['after_9999']}) AS d2")
    rebase = {"spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
              "spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
              "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
              "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED"}
    with harness.sql_conf(spark, rebase):
        table.write.parquet(str(tmp_path / "ts"))
        assert digest_of(spark, spark.read.parquet(str(tmp_path / "ts"))) == digest_of(spark, table)


def test_invalid_utf8(spark):
    bad = "CAST(unhex('C328') AS STRING)"
    d = digests_in_both_modes(spark, f"SELECT {bad} AS s")
    assert digest_of(spark, "SELECT '\uFFFD(' AS s") != d  # what a decoder would make of it
    assert digest_of(spark, "SELECT CAST(unhex('C329') AS STRING) AS s") != d
    assert digest_of(spark, "SELECT CAST(unhex('C3A9') AS STRING) AS s") == digest_of(spark, "SELECT 'é' AS s")
    for wrap in ("array({})", "named_struct('f', {})", "map({}, 1, 'a', 2)"):
        nested = digests_in_both_modes(spark, f"SELECT {wrap.format(bad)} AS s")
        assert nested != digest_of(spark, f"SELECT {wrap.format(chr(39) + chr(0xFFFD) + '(' + chr(39))} AS s")
    rows = spark.sql(f"SELECT logical_hash({bad}) AS h FROM range(3)").collect()
    assert len({bytes(r.h) for r in rows}) == 1
