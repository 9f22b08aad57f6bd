"""SPEC.md §16.6: the dsha-keyed-v2 golden vectors (tests/golden/vectors-keyed-v2.json, written by the
independent reference tests/reference/dsha_reference_secure.py from the SPEC text), computed by Spark's keyed
functions under `spark.dsha.keyed.algorithm=dsha-keyed-v2`, and by dsha.fingerprint(algorithm="keyed-v2")."""
import json
import os
import sys

import pytest
from pyspark.sql import functions as F
from spark_conf import CODEGEN_MODES, sql_conf

import dsha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import vector_file  # noqa: E402

with open(os.path.join(os.path.dirname(vector_file.PATH), "vectors-keyed-v2.json"), encoding="utf-8") as _f:
    KEYED2 = json.load(_f)
VECTORS = {v["name"]: v for v in vector_file.load()["vectors"]}
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")
NESTED = ("map<", "variant", "array<", "struct<\"")


SAMPLE = vector_file.python_sample(KEYED2["vectors"])  # every vector: GoldenKeyedV2VectorsSuite, every build


@pytest.mark.skipif(MODE == "connect", reason="SQL over the vectors: classic only")
@pytest.mark.parametrize("expected", SAMPLE, ids=[v["name"] for v in SAMPLE])
def test_keyed_v2_golden_vector(spark, expected):
    vector = VECTORS[expected["name"]]
    if not vector_file.applies(vector, spark.version):
        pytest.skip(f"needs Spark {vector['min_spark']}")
    args = vector_file.arguments(vector)
    key = f"'{KEYED2['key_hex']}', "
    results = set()
    nested = any(t in vector["schema"][len("struct<"):] for t in NESTED)
    for mode in ("CODEGEN_ONLY", "NO_CODEGEN") if nested else ("CODEGEN_ONLY",):
        conf = {**vector.get("conf", {}), **CODEGEN_MODES[mode], "spark.dsha.keyed.algorithm": "dsha-keyed-v2"}
        with sql_conf(spark, conf):
            df = spark.sql(vector["sql"]).repartition(2)
            r = df.agg(F.expr(f"dsha_keyed({key}{args})").alias("k"),
                       F.expr(f"dsha_keyed_fingerprint({key}{args})").alias("f"),
                       F.expr(f"lower(hex(dsha_keyed_state({key}{args})))").alias("ks")).first()
        results.add((r.k, r.f.content_sum, r.f.algorithm, r.ks))
    assert len(results) == 1, f"the codegen modes disagree: {results}"
    k, kc, algorithm, ks = results.pop()
    assert (k, kc, algorithm) == (expected["keyed_v2"]["dsha"], expected["keyed_v2"]["content_sum"], "dsha-keyed-v2")
    assert ks == expected["keyed_v2"]["state"]


def test_fingerprint_keyed_v2_and_the_setting_restored(spark):
    """The Python API (classic and Connect): algorithm="keyed-v2" gives the vector's digest, the session's setting is
    as before afterwards, and dsha-keyed-v1 under the same key differs."""
    expected = next(v for v in KEYED2["vectors"] if v["name"] == "int")
    vector = VECTORS["int"]
    df = spark.sql(vector["sql"])
    args = vector_file.arguments(vector)
    df = df if args == "*" else df.selectExpr(*args.split(","))
    key = bytes.fromhex(KEYED2["key_hex"])
    before = spark.conf.get("spark.dsha.keyed.algorithm", None)
    f2 = dsha.fingerprint(df, algorithm="keyed-v2", key=key)
    assert spark.conf.get("spark.dsha.keyed.algorithm", None) == before
    assert (f2.digest, f2.algorithm) == (expected["keyed_v2"]["dsha"], "dsha-keyed-v2")
    f1 = dsha.fingerprint(df, key=key)
    assert f1.algorithm == "dsha-keyed-v1" and f1.digest != f2.digest


def test_an_unknown_keyed_algorithm_names_the_setting(spark):
    with sql_conf(spark, {"spark.dsha.keyed.algorithm": "dsha-keyed-v9"}):
        with pytest.raises(Exception) as e:
            spark.sql(f"SELECT dsha_keyed('{KEYED2['key_hex']}', id) FROM range(3)").collect()
    assert "spark.dsha.keyed.algorithm" in str(e.value) and "dsha-keyed-v9" in str(e.value)
    assert KEYED2["key_hex"] not in str(e.value)
