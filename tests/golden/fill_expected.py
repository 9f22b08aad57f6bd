"""Fills in the expected outputs of golden vectors that have none yet, computed by the dsha engine.

Deliberate use only: run it after adding a vector, then check the new values with the independent reference
implementation (`python tests/reference/dsha_reference.py check tests/golden/vectors.json`). It never changes an
existing expected value: changing a digest of dsha-v1 is a breaking change (SPEC.md, "Versioning").

    DSHA_JAR=jvm/target/dsha-0.1.0.jar .venv/spark-4.3.0/bin/python tests/golden/fill_expected.py
"""
import json
import os
import sys

from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "vectors.json")
EXPECTED = ("row_digests", "dsha", "content_sum", "schema_digest")


def version_tuple(v):
    return tuple(int(x) for x in v.split(".")[:2])


def main():
    jar = os.environ.get("DSHA_JAR") or sys.exit("set DSHA_JAR to the dsha jar")
    spark = (SparkSession.builder.master("local[1]")
             .config("spark.jars", jar)
             .config("spark.sql.extensions", "io.dsha.registration.DshaExtensions")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    doc = json.load(open(VECTORS, encoding="utf-8"))
    changed = 0
    for v in doc["vectors"]:
        if all(k in v for k in EXPECTED):
            continue
        if version_tuple(spark.version) < version_tuple(v.get("min_spark", "0.0")):
            print(f"skip {v['name']}: needs Spark {v['min_spark']}")
            continue
        for k, val in v.get("conf", {}).items():
            spark.conf.set(k, val)
        fp = spark.sql(f"SELECT dsha_fingerprint(*) AS f FROM ({v['sql']})").first().f
        if fp.schema != v["schema"]:
            sys.exit(f"{v['name']}: engine schema {fp.schema} != vector schema {v['schema']}")
        digests = [r.h for r in spark.sql(f"SELECT lower(hex(logical_hash(*))) AS h FROM ({v['sql']})").collect()]
        v.update(row_digests=digests, dsha=fp.digest, content_sum=fp.content_sum, schema_digest=fp.schema_digest)
        changed += 1
        print(f"filled {v['name']}")
    with open(VECTORS, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{changed} vectors filled")


if __name__ == "__main__":
    main()
