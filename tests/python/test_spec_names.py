"""SPEC.md §2.1 (how the arguments of dsha are named) and §2.3 (CHAR(n) values and spark.sql.readSideCharPadding),
checked on a Spark session."""
import os
import sys

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F
from spark_conf import sql_conf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import dsha_reference  # noqa: E402

# One column `a` = 1: the golden vector "int" (SPEC §10), whatever the argument list names it by.
ONE_COLUMN_A = "SELECT 1 AS a"
INT_VECTOR_DIGEST = "f81b4f50120257113ca082dac8d7cc1cd942eabb60826c36d4fa784b250ba60bfbdf1ca2c46"
NESTED = "SELECT named_struct('x', 1, 'y', named_struct('x', 'deep')) AS s, 2 AS x"


def _value(spark, expr, sql):
    return spark.sql(f"SELECT {expr} AS v FROM ({sql})").first().v


def _schema(spark, arguments, sql):
    return _value(spark, f"dsha_fingerprint({arguments}).schema", sql)


def test_a_column_reference_has_the_tables_spelling(spark):
    digests = {args: _value(spark, f"dsha({args})", ONE_COLUMN_A) for args in ("a", "A", "*")}
    assert digests == {"a": INT_VECTOR_DIGEST, "A": INT_VECTOR_DIGEST, "*": INT_VECTOR_DIGEST}
    assert _schema(spark, "A", ONE_COLUMN_A) == 'struct<"a":int>'
    df = spark.sql(ONE_COLUMN_A)
    assert df.agg(F.call_function("dsha", F.col("A"))).first()[0] == INT_VECTOR_DIGEST


@pytest.mark.parametrize("arguments", ["a, A", "a, a", "A, a"])
def test_the_same_column_twice_is_an_error(spark, arguments):
    with pytest.raises(AnalysisException) as error:
        _value(spark, f"dsha({arguments})", ONE_COLUMN_A)
    assert "`a`" in str(error.value)  # the column, by its name in the table


def test_a_nested_field_is_named_by_its_last_field(spark):
    assert _schema(spark, "s.x", NESTED) == 'struct<"x":int>'
    assert _schema(spark, "s.y.x", NESTED) == 'struct<"x":string>'
    assert _schema(spark, "S.Y.X", NESTED) == 'struct<"x":string>'  # the field's name as the struct type has it
    assert _schema(spark, "s.y", NESTED) == 'struct<"y":struct<"x":string>>'
    # the same digest as the field selected into a column of that name
    assert _value(spark, "dsha(s.y.x)", NESTED) == _value(spark, "dsha(*)", "SELECT 'deep' AS x")


def test_a_nested_field_and_a_column_of_the_same_name_are_an_error(spark):
    with pytest.raises(AnalysisException) as error:
        _value(spark, "dsha(s.x, x)", NESTED)
    assert "`x`" in str(error.value)
    # aliased apart (DataFrame API; SQL has no alias inside a function call), they are two columns
    df = spark.sql(NESTED)
    fp = df.agg(F.call_function("dsha_fingerprint", F.col("s.x").alias("sx"), F.col("x")).alias("f")).first().f
    assert fp.schema == 'struct<"sx":int,"x":int>'


def test_a_name_with_a_lone_surrogate_is_refused_naming_the_column(spark, tmp_path):
    """SPEC §2.1: Spark's JSON reader, decoding the text itself, keeps "\\ud800" in a name; every algorithm refuses it
    with the name escaped, where Java's UTF-8 encoder hashed it as '?' (one name with "\\udbff" and "?")."""
    import dsha

    path = tmp_path / "t.json"
    path.write_text('{"a\\ud800": 1, "s": {"x\\udbff": 2, "y": 3}}\n', encoding="ascii")
    df = spark.read.option("encoding", "UTF-8").json(str(path))
    for algorithm in (None, "secure"):
        with pytest.raises(Exception, match=r"`a\\uD800`: the name a\\uD800 is not valid Unicode"):
            dsha.fingerprint(df, algorithm=algorithm)
    with pytest.raises(Exception, match=r"`s`\.`x\\uDBFF`: the name x\\uDBFF is not valid Unicode"):
        dsha.fingerprint(df.select("s"))
    # The valid name '?' still hashes, as the reference hashes it.
    want = dsha_reference.table_digest('struct<"a?":bigint>', [{"a?": 1}])["digest"]
    assert dsha.fingerprint(spark.sql("SELECT CAST(1 AS BIGINT) AS `a?`")).digest == want


def test_other_expressions_are_named_by_position(spark):
    assert _schema(spark, "CAST(a AS BIGINT)", ONE_COLUMN_A) == 'struct<"_1":bigint>'
    sql = "SELECT 1 AS a, array(5) AS arr, map('k', 'v') AS m"
    assert _schema(spark, "a + 1, arr[0], m['k'], 7, a", sql) == \
        'struct<"_1":int,"_2":int,"_3":string,"_4":int,"a":int>'


KEY = "000102030405060708090a0b0c0d0e0f"


def test_n_counts_the_hashed_columns_only(spark):
    """SPEC §2.1: a keyed function's key, logical_hash_in's digests and logical_filter_word_in's words are not
    columns: `_N` counts from the first column. `a + 1` right after them is `_1`, so a column named `_2` beside it is
    no clash (it would be, were the leading argument counted)."""
    sql = "SELECT 1 AS a, 5 AS _2"
    assert _value(spark, f"dsha_keyed_fingerprint('{KEY}', a + 1).schema", sql) == 'struct<"_1":int>'
    assert _value(spark, f"dsha_keyed_fingerprint('{KEY}', a + 1, _2).schema", sql) == 'struct<"_1":int,"_2":int>'
    digest = dsha_reference.row_digest('struct<"_1":int,"_2":int>', {"_1": 2, "_2": 5}).hex()
    assert _value(spark, f"logical_hash_in(X'{digest}', a + 1, _2)", sql) is True
    assert _value(spark, f"lower(hex(logical_hash(a + 1, _2)))", sql) == digest
    assert _value(spark, "logical_filter_word_in(X'00000000', a + 1, _2)", sql) in (True, False)
    with pytest.raises(AnalysisException):  # the control: a real clash is refused
        _value(spark, "logical_hash(7, a + 1, _2)", sql)


# CHAR(5) holding 'ab': padded to 5 characters ('ab   ') with spark.sql.readSideCharPadding=true (the default), and
# as stored with false. These are the digests of the one-column tables x = 'ab   ' and x = 'ab' (SPEC §2.3).
CHAR_SCHEMA = 'struct<"c":string>'
PADDED = "f81b4f50120586fa3ba9157ab5524a886cdf1eaacbdc07591daeb5c6063a587a996aa362773"
UNPADDED = "f81b4f5012041eb19318d743c98adc73f2b0fcaa4694a490c8c93e687e674da6e9325a12178"


def test_char_digests_are_those_of_the_reference():
    assert dsha_reference.table_digest(CHAR_SCHEMA, [{"c": "ab   "}])["digest"] == PADDED
    assert dsha_reference.table_digest(CHAR_SCHEMA, [{"c": "ab"}])["digest"] == UNPADDED


@pytest.fixture
def char_tables(spark, tmp_path):
    """Two CHAR(5) tables holding 'ab': `dsha_spec_char_foreign` over a Parquet file that stores it unpadded (as
    another writer, or Spark with a STRING schema, would), `dsha_spec_char_spark` written by Spark through CHAR(5)."""
    foreign, written = tmp_path / "foreign", tmp_path / "written"
    spark.createDataFrame([("ab",)], "c string").write.parquet(str(foreign))
    spark.sql(f"CREATE TABLE dsha_spec_char_foreign (c CHAR(5)) USING parquet LOCATION '{foreign}'")
    spark.sql(f"CREATE TABLE dsha_spec_char_spark (c CHAR(5)) USING parquet LOCATION '{written}'")
    try:
        spark.sql("INSERT INTO dsha_spec_char_spark VALUES ('ab')")
        yield "dsha_spec_char_foreign", "dsha_spec_char_spark"
    finally:
        spark.sql("DROP TABLE IF EXISTS dsha_spec_char_foreign")
        spark.sql("DROP TABLE IF EXISTS dsha_spec_char_spark")


@pytest.mark.parametrize("padding", ["true", "false"])
def test_char_values_are_hashed_as_spark_returns_them(spark, char_tables, padding):
    foreign, written = char_tables
    with sql_conf(spark, {"spark.sql.readSideCharPadding": padding}):
        value = spark.sql(f"SELECT c FROM {foreign}").first().c
        fp = spark.sql(f"SELECT dsha_fingerprint(*) AS f FROM {foreign}").first().f
        spark_written = spark.sql(f"SELECT dsha(*) AS d FROM {written}").first().d
    assert fp.schema == CHAR_SCHEMA
    if padding == "true":
        assert value == "ab   "
        assert fp.digest == PADDED
    else:
        # the same table, another digest: the stored, unpadded value
        assert value == "ab"
        assert fp.digest == UNPADDED
    # Spark pads on write, so what it wrote through CHAR(5) reads (and hashes) padded under either setting.
    assert spark_written == PADDED

