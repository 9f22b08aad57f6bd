"""SPEC.md §16.5: the dsha-secure-v1, dsha-secure-v2 and dsha-keyed-v1 golden vectors (tests/golden/vectors-secure.json
and vectors-secure-v2.json, written by the independent reference tests/reference/dsha_reference_secure.py), computed by Spark in every codegen mode the
Python suites run (classic or Spark Connect, per DSHA_SPARK_MODE)."""
import hashlib
import json
import os
import sys

import pytest
from pyspark.sql import functions as F
from spark_conf import CODEGEN_MODES, sql_conf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import vector_file  # noqa: E402

with open(os.path.join(os.path.dirname(vector_file.PATH), "vectors-secure.json"), encoding="utf-8") as _f:
    SECURE = json.load(_f)
with open(os.path.join(os.path.dirname(vector_file.PATH), "vectors-secure-v2.json"), encoding="utf-8") as _f:
    SECURE_V2 = {v["name"]: v["secure_v2"] for v in json.load(_f)["vectors"]}
VECTORS = {v["name"]: v for v in vector_file.load()["vectors"]}
MODE = os.environ.get("DSHA_SPARK_MODE", "classic")
# Generated code for every vector, and interpreted code too for the vectors with nested values (maps, variants,
# arrays, structs), where the two paths differ most; flat types are compared across modes on random tables by
# test_secure.py and the Scala suite (with the row-bytes step). This keeps the file's two minutes per line to one.
NESTED = ("map<", "variant", "array<", "struct<\"")
pytestmark = pytest.mark.skipif(MODE == "connect", reason="SQL over the vectors: classic only (test_secure.py and "
                                "test_secure_forgery.py run on Spark Connect)")


def test_the_file_covers_maps_variants_and_most_vectors():
    names = {v["name"] for v in SECURE["vectors"]}
    assert len(names) >= 40 and {"map_1234", "map_3412"} <= names
    assert any("variant" in VECTORS[n]["schema"] for n in names)
    assert set(SECURE_V2) == names


SAMPLE = vector_file.python_sample(SECURE["vectors"])  # every vector: GoldenSecureVectorsSuite, every build


@pytest.mark.parametrize("expected", SAMPLE, ids=[v["name"] for v in SAMPLE])
def test_secure_golden_vector(spark, expected):
    vector = VECTORS[expected["name"]]
    if not vector_file.applies(vector, spark.version):
        pytest.skip(f"needs Spark {vector['min_spark']}")
    args = vector_file.arguments(vector)
    key = f"'{SECURE['key_hex']}', "
    results = set()
    nested = any(t in vector["schema"][len("struct<"):] for t in NESTED)
    for mode in ("CODEGEN_ONLY", "NO_CODEGEN") if nested else ("CODEGEN_ONLY",):
        with sql_conf(spark, {**vector.get("conf", {}), **CODEGEN_MODES[mode]}):
            df = spark.sql(vector["sql"]).repartition(2)
            # Each secure algorithm's state (4 KiB, 2 KiB), and its digest and content sum as that state finalises:
            # two secure aggregates, not six (their generated code took ~2/3 of this file's time). The Scala suite
            # holds dsha_secure(_v2) and dsha_secure(_v2)_fingerprint equal to what their states finalise to.
            r = df.agg(F.expr(f"dsha_secure_state({args})").alias("ss"),
                       F.expr(f"dsha_secure_v2_state({args})").alias("vs"),
                       F.expr(f"dsha_keyed({key}{args})").alias("k"),
                       F.expr(f"dsha_keyed_fingerprint({key}{args}).content_sum").alias("kc"),
                       F.expr(f"lower(hex(dsha_keyed_state({key}{args})))").alias("ks")).first()
        f = (spark.createDataFrame([(bytes(r.ss), bytes(r.vs))], "ss binary, vs binary")
             .selectExpr("dsha_final(ss) AS s", "dsha_final_fingerprint(ss).content_sum AS sc",
                         "dsha_final(vs) AS v", "dsha_final_fingerprint(vs).content_sum AS vc").first())
        results.add((f.s, hashlib.sha256(bytes(r.ss)).hexdigest(), hashlib.sha256(f.sc.encode()).hexdigest(),
                     f.v, hashlib.sha256(bytes(r.vs)).hexdigest(), hashlib.sha256(f.vc.encode()).hexdigest(),
                     r.k, r.kc, r.ks))
    assert len(results) == 1, f"the codegen modes disagree: {results}"
    s, ss, sc, v, vs, vc, k, kc, ks = results.pop()
    assert s == expected["secure"]["dsha"]
    assert ss == expected["secure"]["state_sha256"]
    assert sc == expected["secure"]["content_sum_sha256"]
    v2 = SECURE_V2[expected["name"]]
    assert (v, vs, vc) == (v2["dsha"], v2["state_sha256"], v2["content_sum_sha256"])
    assert k == expected["keyed"]["dsha"]
    assert kc == expected["keyed"]["content_sum"]
    assert ks == expected["keyed"]["state"]
