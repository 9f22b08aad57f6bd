"""Spark reproduces tests/golden/vectors-sketch.json (written by the independent reference, SPEC.md §17.6) byte for
byte, through PySpark: sketches at 6 cells with column digests and 1 cell without, folds, and decoded differences, for
a sample of the file (tests/golden/vector_file.py). Every vector, in every execution mode, is checked by the Scala suite
(GoldenSketchVectorsSuite) on every Spark build."""
import json
import os
import sys

import pytest

from spark_conf import sql_conf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import vector_file  # noqa: E402

VECTORS = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden", "vectors-sketch.json"),
                         encoding="utf-8"))


# Each table of vectors.json (its arguments, as its test calls dsha: "*" unless the vector names them; min_spark; conf).
TABLES = {v["name"]: v for v in vector_file.load()["vectors"]}
ARGUMENTS = {name: vector_file.arguments(v) for name, v in TABLES.items()}


def on_this_spark(spark, name):
    """The table's settings (its conf), after skipping a table this Spark line does not have (its min_spark)."""
    table = TABLES[name]
    if not vector_file.applies(table, spark.version):
        pytest.skip(f"needs Spark {table['min_spark']}")
    return sql_conf(spark, table.get("conf", {}))


def sketch_hex(spark, sql, cells, columns=True, arguments="*"):
    with sql_conf(spark, {"spark.dsha.sketch.cells": cells, "spark.dsha.sketch.columnDigests": str(columns).lower()}):
        return bytes(spark.sql(f"SELECT dsha_sketch({arguments}) FROM ({sql})").first()[0]).hex()


SKETCHES = vector_file.python_sample(VECTORS["sketches"])
DIFFERENCES = [v for v in VECTORS["differences"] if v["name"] in ("right_only_and_changed", "too_large_for_m",
                                                                  "gcd_12_and_8")]


@pytest.mark.parametrize("vector", SKETCHES, ids=lambda v: v["name"])
def test_sketches(spark, vector):
    arguments = ARGUMENTS[vector["name"]]
    with on_this_spark(spark, vector["name"]):
        assert sketch_hex(spark, vector["sql"], 6, arguments=arguments) == vector["sketch_m6"]
        assert sketch_hex(spark, vector["sql"], 1, columns=False, arguments=arguments) == \
            vector["sketch_m1_no_columns"]


def test_every_table_has_sketch_vectors():
    """SPEC.md §17.6: the file holds the sketch and filter words of every table of vectors.json, in its order."""
    assert [v["name"] for v in VECTORS["sketches"]] == list(TABLES)
    assert {"variant", "collated_string", "intervals", "void", "time", "timestamp_nanos", "nan",
            "booleans"} <= {v["name"] for v in SKETCHES} | {v["name"] for v in VECTORS["sketches"]}


def test_fold(spark):
    f = VECTORS["fold"]
    source = next(v for v in VECTORS["sketches"] if v["name"] == f["name"])["sql"]
    assert sketch_hex(spark, source, 12) == f["sketch_m12"]
    assert sketch_hex(spark, source, 3) == f["folded_m3"] and sketch_hex(spark, source, 4) == f["folded_m4"]


@pytest.mark.parametrize("vector", DIFFERENCES, ids=lambda v: v["name"])
def test_differences(spark, vector):
    m_left, m_right = vector.get("m_left", vector.get("m")), vector.get("m_right", vector.get("m"))
    left, right = sketch_hex(spark, vector["sql_left"], m_left), sketch_hex(spark, vector["sql_right"], m_right)
    assert left == vector["sketch_left"] and right == vector["sketch_right"]
    assert_decodes(spark, left, right, vector["decode"])


def assert_decodes(spark, left, right, expected):
    """dsha_sketch_diff of two sketches (hex) gives the reference's decode: success, size, entries, filter words."""
    d = spark.sql(f"SELECT dsha_sketch_diff(X'{left}', X'{right}') AS d").first()["d"]
    assert d["decoded"] is expected["success"]
    assert d["filters_valid"] is expected["filters_valid"]
    if expected["success"]:
        assert d["cells_used"] == expected["cells_used"]
        assert {bytes(e["digest"]).hex(): e["count"] for e in d["entries"]} == expected["entries"]
        if expected["filters_valid"]:
            assert {bytes(e["digest"]).hex(): e["filter"] for e in d["entries"]} == expected["filters"]
        else:
            assert all(e["filter"] is None for e in d["entries"])
    else:
        assert d["entries"] is None and d["estimate"] > 0


@pytest.mark.parametrize("vector", SKETCHES, ids=lambda v: v["name"])
def test_filter_words(spark, vector):
    """Each table's rows' filter words (SPEC.md §17.2.1), as its sketch minus the empty sketch decodes them."""
    arguments = ARGUMENTS[vector["name"]]
    with on_this_spark(spark, vector["name"]):
        with sql_conf(spark, {"spark.dsha.sketch.cells": 6, "spark.dsha.sketch.columnDigests": "true"}):
            empty = bytes(spark.sql(f"SELECT dsha_sketch({arguments}) FROM ({vector['sql']}) WHERE false")
                          .first()[0]).hex()
        assert_decodes(spark, sketch_hex(spark, vector["sql"], 6, arguments=arguments), empty, vector["decode"])


@pytest.mark.parametrize("vector", VECTORS["version1"][:1], ids=lambda v: v["name"])
def test_version1(spark, vector):
    """Sketches of format version 1 (no filter words) are read: they decode as before, without filter words."""
    arguments = ARGUMENTS[vector["name"]]
    with sql_conf(spark, {"spark.dsha.sketch.cells": 6, "spark.dsha.sketch.columnDigests": "true"}):
        empty = bytes(spark.sql(f"SELECT dsha_sketch({arguments}) FROM ({vector['sql']}) WHERE false").first()[0]).hex()
    assert_decodes(spark, vector["sketch_m6"], empty, vector["decode"])
