"""Fills in the expected outputs of golden vectors that have none yet, computed by the dsha engine.

Deliberate use only: run it after adding a vector, then check the new values with the independent reference
implementation (`python tests/reference/dsha_reference.py check tests/golden/vectors.json`). It never changes an
existing expected value: changing a digest of dsha-v1 is a breaking change (SPEC.md, "Versioning"). With vector names
as arguments, it fills only those.

    DSHA_JAR=jvm/target/dsha-0.1.0.jar .venv/spark-4.3.0/bin/python tests/golden/fill_expected.py [NAME ...]

(The reference can fill vectors too, `dsha_reference.py fill tests/golden/vectors.json NAME ...`: for vectors whose
expected values the specification decides before the engine implements them.)
"""
import json
import os
import sys

from pyspark.sql import SparkSession

from vector_file import EXPECTED, PATH, applies, arguments, load


def main(names):
    jar = os.environ.get("DSHA_JAR") or sys.exit("set DSHA_JAR to the dsha jar")
    doc = load()
    unknown = set(names) - {v["name"] for v in doc["vectors"]}
    if unknown:
        sys.exit(f"no vector named {sorted(unknown)}")
    spark = (SparkSession.builder.master("local[1]")
             .config("spark.jars", jar)
             .config("spark.sql.extensions", "io.dsha.registration.DshaExtensions")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    changed = 0
    for v in doc["vectors"]:
        if (names and v["name"] not in names) or all(k in v for k in EXPECTED):
            continue
        if not applies(v, spark.version):
            print(f"skip {v['name']}: needs Spark {v['min_spark']}")
            continue
        conf = v.get("conf", {})
        for k, val in conf.items():
            spark.conf.set(k, val)
        args = arguments(v)
        row = spark.sql(f"SELECT dsha_fingerprint({args}) AS f, lower(hex(dsha_state({args}))) AS s "
                        f"FROM ({v['sql']})").first()
        fp = row.f
        if fp.schema != v["schema"]:
            sys.exit(f"{v['name']}: engine schema {fp.schema} != vector schema {v['schema']}")
        digests = [r.h for r in spark.sql(f"SELECT lower(hex(logical_hash({args}))) AS h FROM ({v['sql']})").collect()]
        for k in conf:  # a vector's settings apply to that vector only
            spark.conf.unset(k)
        computed = dict(row_digests=digests, dsha=fp.digest, content_sum=fp.content_sum,
                        schema_digest=fp.schema_digest, state=row.s)
        conflicts = [k for k in EXPECTED if k in v and v[k] != computed[k]]
        if conflicts:
            sys.exit(f"{v['name']}: the engine computes other {conflicts} than the vector has (kept; fix the engine)")
        missing = [k for k in EXPECTED if k not in v]
        v.update({k: computed[k] for k in missing})  # only ever add: existing expected values are never changed
        changed += 1
        print(f"filled {v['name']}: {', '.join(missing)}")
    with open(PATH, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{changed} vectors filled")


if __name__ == "__main__":
    main(sys.argv[1:])
