"""The golden vectors of SPEC.md, checked through PySpark (classic or Spark Connect, per DSHA_SPARK_MODE)."""
import json
import os

import pytest
from pyspark.sql import functions as F
from spark_conf import sql_conf

VECTORS = os.path.join(os.path.dirname(__file__), "..", "golden", "vectors.json")
DOC = json.load(open(VECTORS, encoding="utf-8"))


def _version(v):
    return tuple(int(x) for x in v.split(".")[:2])


@pytest.mark.parametrize("vector", DOC["vectors"], ids=[v["name"] for v in DOC["vectors"]])
def test_golden_vector(spark, vector):
    if _version(spark.version) < _version(vector.get("min_spark", "0.0")):
        pytest.skip(f"needs Spark {vector['min_spark']}")
    with sql_conf(spark, vector.get("conf", {})):
        df = spark.sql(vector["sql"]).repartition(2)
        fp = df.agg(F.call_function("dsha_fingerprint", F.col("*")).alias("f")).select("f.*").first()
        rows = sorted(r[0] for r in df.select(F.lower(F.hex(F.call_function("logical_hash", F.col("*"))))).collect())
    assert fp.schema == vector["schema"]
    assert fp.schema_digest == vector["schema_digest"]
    assert rows == sorted(vector["row_digests"])
    assert fp.content_sum == vector["content_sum"]
    assert fp.rows == len(vector["rows"])
    assert fp.digest == vector["dsha"]
