"""Reading tests/golden/vectors.json for the Spark-side checks (tests/python/test_golden.py) and the filler
(fill_expected.py): the vectors, which Spark versions a vector applies to, and the dsha calls it makes (SPEC.md §10).
The independent reference implementation (tests/reference) does not use this: it reads the file itself."""
import json
import os
import re

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
EXPECTED = ("row_digests", "dsha", "content_sum", "schema_digest", "state")


def load(path=PATH):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def version(text):
    """(major, minor) of a version string: "4.0.1" -> (4, 0), "4.1.0-preview2" -> (4, 1), "4.3" -> (4, 3)."""
    parts = re.findall(r"\d+", text)[:2]
    if len(parts) != 2:
        raise ValueError(f"not a Spark version: {text!r}")
    return tuple(int(p) for p in parts)


def applies(vector, spark_version):
    """Whether a vector runs on this Spark version (its optional min_spark, major.minor)."""
    return version(spark_version) >= version(vector.get("min_spark", "0.0"))


def arguments(vector):
    """The SQL argument list of the vector's dsha calls: its optional "arguments", by default *."""
    return vector.get("arguments", "*")


# The vectors the Python suites check through PySpark (classic and Spark Connect): every vector of every file is checked
# by the Scala suite on every Spark build (jvm/src/test Golden*Suite), so the Python side needs only a sample that spans
# the layouts (fixed, nullable, length-prefixed, map, nested, variant, collation, interval, empty) to check its path.
PYTHON_SAMPLE = ("int", "nulls", "unicode_and_binary", "decimals", "datetimes", "intervals", "map_nested",
                 "array_of_structs", "names_mixed", "variant", "collated_string", "table_empty")


def python_sample(vectors):
    """The vectors among ``vectors`` (a list of dicts with "name") that the Python suites check: see PYTHON_SAMPLE."""
    chosen = [v for v in vectors if v["name"] in PYTHON_SAMPLE]
    if not chosen:
        raise ValueError("no vector of the Python sample is in this list")
    return chosen
