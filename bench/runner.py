"""Running the methods: the round-robin Runner, the phases a child process runs (suite, parallel, scaling, profile),
and starting such a child from the parent. Each phase gets a fresh Python process with its own Spark JVM, so one
phase's caches, JIT state and garbage do not weigh on the next."""
import json
import os
import subprocess
import sys
import time

from common import HERE, log, loadavg
from data import NESTED_SEED, make_nested
from methods import PARALLEL_METHODS, SCALING_METHODS, lineitem_methods, nested_methods
from session import machine_info, spark_session

# The scaling phase also times each method on a table this small, as the fixed cost of a query.
FIXED_COST_ROWS = 1000
FIXED_COST_KEY = "fixed"


class Runner:
    """Times methods round-robin; results[name] = list of {"seconds", "load1"}."""

    def __init__(self, rounds, slow_rounds, warmup):
        self.rounds = rounds
        self.slow_rounds = slow_rounds
        self.warmup = warmup

    def run(self, methods, label):
        # methods: list of (name, fn, slow)
        results = {name: [] for name, _, _ in methods}
        for _ in range(int(self.warmup)):
            for name, fn, slow in methods:
                if not slow:
                    t = time.perf_counter()
                    fn()
                    log(f"{label}: warm-up {name} {time.perf_counter() - t:.2f} s")
        for r in range(self.rounds):
            for name, fn, slow in methods:
                if slow and r >= self.slow_rounds:
                    continue
                la = loadavg()
                t = time.perf_counter()
                fn()
                dt = time.perf_counter() - t
                results[name].append({"seconds": round(dt, 4), "load1": la[0] if la else None})
                log(f"{label}: round {r + 1}/{self.rounds} {name} {dt:.2f} s (load {la[0] if la else '?'})")
        return results


def cache(df):
    df = df.cache()
    rows = df.count()
    df.write.format("noop").mode("overwrite").save()  # every column materialised in the cache
    return df, rows


def suite_phase(spark, runner, spec, out):
    path = spec["lineitem"]
    df, rows = cache(spark.read.parquet(path))
    out["lineitem"] = {"rows": rows, "partitions": df.rdd.getNumPartitions(), "path": path}
    df_b = None
    if {"dsha_equality", "except_all_both"} & set(spec["lineitem_methods"]):
        # The second copy: the same rows, read again and shuffled into a different partitioning.
        df_b, _ = cache(spark.read.parquet(path).repartition(7))
    methods = lineitem_methods(spark, df, df_b, path, spec["lineitem_methods"])
    out["lineitem"]["results"] = runner.run(methods, "lineitem")
    df.unpersist(blocking=True)
    if df_b is not None:
        df_b.unpersist(blocking=True)
    if spec["nested_methods"]:
        make_nested(spark, spec["nested_rows"], NESTED_SEED, spec["nested"])
        nd, nrows = cache(spark.read.parquet(spec["nested"]))
        out["nested"] = {"rows": nrows, "partitions": nd.rdd.getNumPartitions(), "path": spec["nested"],
                         "schema": nd.schema.simpleString()}
        out["nested"]["results"] = runner.run(nested_methods(spark, nd, spec["nested_methods"]), "nested")
        nd.unpersist(blocking=True)


def parallel_phase(spark, runner, spec, out):
    df, rows = cache(spark.read.parquet(spec["lineitem"]))
    out["lineitem"] = {"rows": rows, "partitions": df.rdd.getNumPartitions()}
    out["lineitem"]["results"] = runner.run(
        lineitem_methods(spark, df, None, spec["lineitem"], PARALLEL_METHODS), spec["master"])


def scaling_phase(spark, runner, spec, out):
    # Every scale factor is cached at once and all (SF, method) pairs run round-robin, so JIT warm-up and load
    # drift do not favour one scale factor over another.
    out["scales"] = {}
    methods, cached = [], []
    # A table of FIXED_COST_ROWS rows in as many partitions as the others: what a query costs whatever its size
    # (planning, code generation, scheduling two stages, the shuffle of partial results), to subtract.
    smallest = spark.read.parquet(spec["scales"][0][1])
    tiny = smallest.limit(FIXED_COST_ROWS).repartition(smallest.rdd.getNumPartitions())
    for sf, df in [(FIXED_COST_KEY, tiny)] + [(sf, spark.read.parquet(path)) for sf, path in spec["scales"]]:
        df, rows = cache(df)
        cached.append(df)
        out["scales"][str(sf)] = {"rows": rows, "partitions": df.rdd.getNumPartitions()}
        for name, fn, slow in lineitem_methods(spark, df, None, None, SCALING_METHODS):
            methods.append((f"{sf}|{name}", fn, slow))
    res = runner.run(methods, "scaling")
    for sf in [FIXED_COST_KEY] + [sf for sf, _ in spec["scales"]]:
        out["scales"][str(sf)]["results"] = {
            k.split("|", 1)[1]: v for k, v in res.items() if k.split("|", 1)[0] == str(sf)}
    for df in cached:
        df.unpersist(blocking=True)


def profile_phase(spark, runner, spec, out):
    # The JVM records with Java Flight Recorder (spec["extra_java_options"]) while the expression runs again and
    # again; the parent aggregates the recording.
    from pyspark.sql import functions as F

    df, rows = cache(spark.read.parquet(spec["lineitem"]))
    out["lineitem"] = {"rows": rows}
    t = time.perf_counter()
    n = 0
    while time.perf_counter() - t < spec["profile_seconds"]:
        df.agg(F.expr(spec["profile_expr"])).collect()
        n += 1
    out["profile_runs"] = n
    out["profile_seconds"] = round(time.perf_counter() - t, 2)


PHASES = {"suite": suite_phase, "parallel": parallel_phase, "scaling": scaling_phase, "profile": profile_phase}


def worker(spec):
    """The child process: runs one phase as the spec says and returns what it measured."""
    phase = spec["phase"]
    extra = spec.get("extra_java_options")
    spark = spark_session(spec["master"], spec["driver_memory"], extra)
    runner = Runner(spec["rounds"], spec["slow_rounds"], spec["warmup"])
    out = {"phase": phase, "master": spec["master"], "machine": machine_info(spark), "load_start": loadavg()}
    PHASES[phase](spark, runner, spec, out)
    out["load_end"] = loadavg()
    spark.stop()
    return out


def run_child(spec, tmpdir):
    """Runs one phase in a child process (run.py --worker); spec and result go through JSON files in tmpdir."""
    name = f"{spec['phase']}-{spec['master'].replace('[', '').replace(']', '')}"
    spec_path = os.path.join(tmpdir, f"{name}.spec.json")
    out_path = os.path.join(tmpdir, f"{name}.out.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    log(f"starting {spec['phase']} ({spec['master']})")
    subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--worker", spec_path, "--worker-out", out_path],
                   check=True)
    with open(out_path) as f:
        return json.load(f)
