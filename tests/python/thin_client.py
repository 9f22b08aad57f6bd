"""The thin client's half of tests/python/test_thin_client.py, run by the interpreter of `dev/python-env client`
(pyspark-client and the dsha wheel with its [client] extra: no JVM, no Spark jars, no py4j).

    python thin_client.py JOB.json     (JOB: {"servers": {name: "sc://..."}, "tables": PICKLE, "store": DIR,
                                              "key": HEX})

For each server, in a session of its own: the tables (Spark schema and rows, pickled by the test from its classic
session) are created there and digested with dsha's public API, which takes the jar-free path by itself; the
answers are printed as one JSON object for the test to compare with the jar's digests of the same rows. Nothing is
compared here. A server that fails is reported with its traceback, not raised, so the other server is still tried.
"""
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import pickle
import sys
import time
import traceback
import warnings

import pyspark
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import dsha
import dsha.jarfree
from dsha.jarfree.columns import logical_hash
from dsha.jarfree.sql import digest_sql


def _children():
    """The commands of this process's child processes (a JVM started by the client would be one)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(stat.split("(", 1)[1].rsplit(")", 1)[0])
        except (OSError, IndexError, ValueError):
            pass
    return found


def environment():
    return {"pyspark_client": importlib.metadata.version("pyspark-client"),
            "pyspark_installed": [d.metadata["Name"] for d in importlib.metadata.distributions()
                                  if d.metadata["Name"].lower() == "pyspark"],
            "jars": os.path.isdir(os.path.join(os.path.dirname(pyspark.__file__), "jars")),
            "py4j": importlib.util.find_spec("py4j") is not None,
            "dsha": os.path.dirname(dsha.__file__),
            "client_extra": sorted(r.split(";")[0].strip() for r in importlib.metadata.requires("dsha") or []
                                   if 'extra == "client"' in r)}


def _diff(left, right, key):
    """What dsha.diff says (its numbers, the ids of the unpaired rows, the changed pairs as they print)."""
    with dsha.diff(left, right, key=key) as d:
        ids = lambda df: sorted(r["id"] for r in df.select("id").collect())  # noqa: E731
        return {**d.to_dict(), "only_left_ids": ids(d.only_left), "only_right_ids": ids(d.only_right),
                "changed_rows": sorted(list(r) for r in d.changed.collect()) if key else None}


def _sql(spark, whole):
    """dsha's SQL functions without the jar (dsha.jarfree.register_sql): row digests and the table digest of
    digest_sql, over the whole table and none of it; a server that cannot run them is reported, not raised."""
    try:
        registered = sorted(dsha.jarfree.register_sql(spark))
        whole.createOrReplaceTempView("thin_client_every")
        rows = spark.sql("SELECT id, hex(dsha_py_logical_hash(struct(*))) AS h FROM thin_client_every").collect()
        return {"registered": registered, "logical_hash": {str(r["id"]): r["h"].lower() for r in rows},
                "digest": spark.sql(digest_sql("thin_client_every")).first()["digest"],
                "empty": spark.sql(digest_sql("(SELECT * FROM thin_client_every WHERE id < 0)")).first()["digest"]}
    except Exception:
        return {"error": traceback.format_exc()}


def on_server(url, tables, store, key):
    started = time.monotonic()
    spark = SparkSession.builder.remote(url).getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "UTC")  # the test's classic session's zone
    out = {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frames = {name: spark.createDataFrame(rows, schema) for name, (schema, rows) in tables.items()}
            out["fingerprints"] = {name: dataclasses.asdict(dsha.fingerprint(df)) for name, df in frames.items()}
            whole = frames["every_type"]
            schema, rows = tables["every_type"]
            same = dsha.equal(whole, spark.createDataFrame(list(reversed(rows)), schema).repartition(3))
            changed = whole.withColumn("i", F.when(F.col("id") == 7, 70).otherwise(F.col("i")))
            edited = dsha.equal(whole, changed)
            other = changed.where("id <> 3")
            out["equal"] = [[bool(c), c.reason] for c in (same, edited)]
            out["tamper_evident"] = {name: dataclasses.asdict(dsha.fingerprint(whole, **kwargs)) for name, kwargs in (
                ("secure", {"algorithm": "secure"}), ("secure-v2", {"algorithm": "secure-v2"}), ("keyed", {"key": key}),
                ("keyed-v2", {"key": key, "algorithm": "keyed-v2"}))}
            out["diff"] = {"rows": _diff(whole, other, None), "by_key": _diff(whole, other, "id")}
            out["states"] = [dsha.state(whole.where(f"id % 2 = {r}")).hex() for r in (0, 1)]
            out["unchanged"] = bool(dsha.changed({"t": whole.repartition(2)}, store=store, name="step"))
            out["changed"] = [c.what for c in dsha.changed({"t": whole.where("id <> 3")}, store=store, name="step")]
            hashed = whole.select("id", logical_hash(*whole.columns).alias("digest")).collect()
            out["logical_hash"] = {str(r["id"]): bytes(r["digest"]).hex() for r in hashed}
        out["sql"] = _sql(spark, whole)
        out["warnings"] = [str(w.message) for w in caught if issubclass(w.category, dsha.DshaWarning)]
        try:
            dsha.fingerprint(whole, engine="jvm")
            out["jvm"] = "no error"
        except dsha.DshaNotLoadedError:
            out["jvm"] = "not loaded"
    except Exception:
        out["error"] = traceback.format_exc()
    finally:
        spark.stop()
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


def main(job_file):
    with open(job_file) as f:
        job = json.load(f)
    with open(job["tables"], "rb") as f:
        tables = pickle.load(f)
    key = bytes.fromhex(job["key"])
    servers = {name: on_server(url, tables, job["store"], key) for name, url in job["servers"].items()}
    print(json.dumps({"environment": environment(), "children": _children(), "servers": servers}))


if __name__ == "__main__":
    main(sys.argv[1])
