"""dsha's SQL functions without the jar (dsha.jarfree.register_sql, issue 31 item 7): dsha_py_logical_hash(struct(...))
and the table digest of dsha.jarfree.sql.digest_sql, run as SQL in the suite's session and compared with the jar's
SQL logical_hash and dsha over the same rows; what the Arrow transfer shows to be inexact is refused. Spark 4.1+
(Arrow UDFs); on older lines registration is refused with the reason. Thin clients and Sail: test_thin_client.py."""
import random

import pytest

pytest.importorskip("pyarrow")
import dsha  # noqa: E402
import dsha.jarfree  # noqa: E402
from conftest import MODE  # noqa: E402
from dsha.errors import UnsupportedTypeError  # noqa: E402
from dsha.jarfree.sql import digest_sql  # noqa: E402
from test_arrow_agreement import _schema, _value  # noqa: E402
from test_jarfree import EVERY_TYPE  # noqa: E402

pyspark_functions = pytest.importorskip("pyspark.sql.functions")
ARROW_UDFS = hasattr(pyspark_functions, "arrow_udf")
pytestmark = pytest.mark.skipif(MODE == "connect", reason="registration is the same call on Connect: "
                                "test_thin_client.py runs it on servers without the jar")


@pytest.fixture(scope="module")
def registered(spark):
    if not ARROW_UDFS:
        pytest.skip("Arrow UDFs for SQL need Spark 4.1+ (register_sql refuses older lines: "
                    "test_register_sql_refuses_lines_without_arrow_udfs)")
    return dsha.jarfree.register_sql(spark)


@pytest.mark.skipif(ARROW_UDFS, reason="this line has Arrow UDFs")
def test_register_sql_refuses_lines_without_arrow_udfs(spark):
    with pytest.raises(UnsupportedTypeError, match="need Arrow UDFs .Spark 4.1"):
        dsha.jarfree.register_sql(spark)


def _jar_digest(spark, relation, columns):
    return spark.sql(f"SELECT dsha({columns}) AS d FROM {relation}").first()["d"]


def _py_digest(spark, relation, row):
    return spark.sql(digest_sql(relation, row)).first()["digest"]


def test_row_hash_and_digest_equal_the_jars_sql(spark, registered):
    assert sorted(registered) == ["dsha_py_logical_hash", "dsha_py_schema_digest"]
    spark.sql(EVERY_TYPE).repartition(2).createOrReplaceTempView("jarfree_sql_every")
    for columns in ("*", "st.a, bin"):
        rows = spark.sql(f"SELECT hex(dsha_py_logical_hash(struct({columns}))) AS py, "
                         f"hex(logical_hash({columns})) AS jvm FROM jarfree_sql_every").collect()
        assert len(rows) == 40 and all(r["py"] == r["jvm"] for r in rows), columns
        assert _py_digest(spark, "jarfree_sql_every", f"struct({columns})") == \
            _jar_digest(spark, "jarfree_sql_every", columns), columns
    # empty tables and subqueries; the schema digest of no rows comes from the struct's type
    for relation in ("(SELECT * FROM jarfree_sql_every WHERE id < 0)", "(SELECT * FROM jarfree_sql_every LIMIT 1)"):
        assert _py_digest(spark, relation, "struct(*)") == _jar_digest(spark, relation, "*"), relation
    # aliases: named_struct names an expression as the jar's alias in a subquery does
    assert _py_digest(spark, "jarfree_sql_every", "named_struct('n', id + 1, 'str', str)") == \
        _jar_digest(spark, "(SELECT id + 1 AS n, str FROM jarfree_sql_every)", "n, str")


def test_digest_carries_across_the_words(spark, registered):
    """Many rows: each 32-bit word's sum overflows 2^32 many times, so every carry is exercised."""
    relation = "(SELECT id, CAST(id * 7 AS STRING) AS s FROM range(0, 5000, 1, 4))"
    assert _py_digest(spark, relation, "struct(*)") == _jar_digest(spark, relation, "*")


def test_random_nested_tables(spark, registered):
    for i in range(2):
        rnd = random.Random(3100 + i)
        schema = _schema(rnd)
        rows = [tuple(_value(rnd, f.dataType) for f in schema.fields) for _ in range(rnd.randint(0, 30))]
        spark.createDataFrame(rows, schema).createOrReplaceTempView("jarfree_sql_random")
        assert _py_digest(spark, "jarfree_sql_random", "struct(*)") == _jar_digest(spark, "jarfree_sql_random", "*")
        mismatched = spark.sql("SELECT count(*) AS n FROM jarfree_sql_random "
                               "WHERE dsha_py_logical_hash(struct(*)) <> logical_hash(*)").first()["n"]
        assert mismatched == 0, i


def test_inexact_arguments_are_refused(spark, registered):
    cases = {"SELECT dsha_py_logical_hash(struct(INTERVAL '3' DAY AS wait))": "column wait: .*cannot hash",
             "SELECT dsha_py_logical_hash(named_struct('v', parse_json('1')))": "column v: .*variant",
             "SELECT dsha_py_logical_hash(named_struct('a', array(parse_json('1'))))": r"column a\[\]: .*variant",
             "SELECT dsha_py_logical_hash(42)": "take the row as one struct",
             "SELECT dsha_py_logical_hash(parse_json('1'))": "take the row as one struct",
             "SELECT dsha_py_logical_hash(IF(rand() > 2, struct(1 AS a), NULL))": "row struct is null",
             "SELECT dsha_py_schema_digest(CAST(NULL AS STRING))": "take the row as one struct"}
    for query, refusal in cases.items():
        with pytest.raises(Exception, match=refusal):
            spark.sql(query).collect()
    from dsha.jarfree.columns import logical_hash  # the DataFrame column shares the refusals (a variant too)

    with pytest.raises(Exception, match="column v: .*variant"):
        spark.sql("SELECT parse_json('1') AS v").select(logical_hash("v")).collect()
    with pytest.raises(ValueError, match="cannot be taken for the jar.s"):
        dsha.jarfree.register_sql(spark, prefix="logical")


def test_the_documented_query_is_digest_sqls():
    """docs/where-it-runs.md shows digest_sql's query as written for its example: it must stay the one tested here."""
    import os

    page = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "where-it-runs.md")
    with open(page, encoding="utf-8") as f:
        assert f"```sql\n{digest_sql('sales', 'struct(id, name)')}\n```" in f.read()
