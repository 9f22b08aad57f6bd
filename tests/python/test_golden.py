"""The golden vectors of SPEC.md, a sample of them checked through PySpark (classic or Spark Connect, per
DSHA_SPARK_MODE): the Scala suite checks every vector on every Spark build."""
import os
import re
import sys

import pytest
from pyspark.sql import functions as F
from spark_conf import sql_conf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import vector_file  # noqa: E402

DOC = vector_file.load()
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")
CALENDAR_INTERVAL = re.compile(r":interval[,>]")


SAMPLE = vector_file.python_sample(DOC["vectors"])  # every vector: the Scala suite (GoldenVectorsSuite), every build


@pytest.mark.parametrize("vector", SAMPLE, ids=[v["name"] for v in SAMPLE])
def test_golden_vector(spark, vector):
    if not vector_file.applies(vector, spark.version):
        pytest.skip(f"needs Spark {vector['min_spark']}")
    if MODE == "connect" and vector_file.version(spark.version) < (4, 0) and CALENDAR_INTERVAL.search(
            vector["schema"]):
        # Spark 3.5's Connect server returns such a query's rows as Arrow, which has no CalendarInterval (Spark 4 can).
        pytest.skip("Spark Connect 3.5 cannot return calendar intervals")
    args = vector_file.arguments(vector)
    with sql_conf(spark, vector.get("conf", {})):
        df = spark.sql(vector["sql"]).repartition(2)
        fp = df.agg(F.expr(f"dsha_fingerprint({args})").alias("f")).select("f.*").first()
        rows = sorted(r[0] for r in df.select(F.expr(f"lower(hex(logical_hash({args})))")).collect())
    assert fp.schema == vector["schema"]
    assert fp.schema_digest == vector["schema_digest"]
    assert rows == sorted(vector["row_digests"])
    assert fp.content_sum == vector["content_sum"]
    assert fp.rows == len(vector["rows"])
    assert fp.digest == vector["dsha"]
