"""Running the methods: the round-robin Runner, the phases a child process runs (suite, parallel, scaling, profile),
and starting such a child from the parent. Each phase gets a fresh Python process with its own Spark JVM, so one
phase's caches, JIT state and garbage do not weigh on the next."""
import json
import os
import subprocess
import sys
import time

from common import HERE, log, loadavg
from data import NESTED_SEED, has_files_table, make_files_table, make_nested
from goals import goals_phase
from methods import (PARALLEL_METHODS, SCALING_METHODS, FileChange, check, lineitem_methods, nested_methods,
                     redigest_methods, uncached, write_methods)
from session import machine_info, spark_session

# The scaling phase also times each method on a table this small, as the fixed cost of a query.
FIXED_COST_ROWS = 1000
FIXED_COST_KEY = "fixed"


class Runner:
    """Times methods round-robin; results[name] = list of {"seconds", "load1"} (and "cpu_seconds" with cpu)."""

    def __init__(self, rounds, slow_rounds, warmup, cpu=None):
        self.rounds = rounds
        self.slow_rounds = slow_rounds
        self.warmup = warmup
        self.cpu = cpu  # () -> CPU seconds the Spark JVM has used so far, or None

    def run(self, methods, label):
        # methods: list of (name, fn, slow), or (name, fn, slow, before, after): before() and after() run untimed
        # around each run of fn (set up a changed file and put it back, delete what a write wrote), or are None.
        methods = [tuple(m) + (None,) * (5 - len(m)) for m in methods]
        results = {m[0]: [] for m in methods}

        def timed(fn, before, after):
            """Wall seconds of fn and, with self.cpu, the JVM's CPU seconds in them."""
            if before:
                before()
            c = self.cpu() if self.cpu else None
            t = time.perf_counter()
            try:
                fn()
                dt = time.perf_counter() - t
                return dt, (None if c is None else self.cpu() - c)
            finally:
                if after:
                    after()

        for _ in range(int(self.warmup)):
            for name, fn, slow, before, after in methods:
                if not slow:
                    log(f"{label}: warm-up {name} {timed(fn, before, after)[0]:.2f} s")
        for r in range(self.rounds):
            for name, fn, slow, before, after in methods:
                if slow and r >= self.slow_rounds:
                    continue
                la = loadavg()
                dt, cpu = timed(fn, before, after)
                run = {"seconds": round(dt, 4), "load1": la[0] if la else None}
                if cpu is not None:
                    run["cpu_seconds"] = round(cpu, 4)
                results[name].append(run)
                log(f"{label}: round {r + 1}/{self.rounds} {name} {dt:.2f} s"
                    f"{'' if cpu is None else f', CPU {cpu:.2f} s'} (load {la[0] if la else '?'})")
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


def write_phase(spark, runner, spec, out):
    # dsha.write against df.write.parquet of the same DataFrame: lineitem read from its files (uncached), and cached.
    import shutil

    import dsha

    path, out_dir = spec["lineitem"], spec["write_dir"]
    expected = dsha.fingerprint(uncached(spark, path)).digest
    df = None
    if any(m.endswith("_cached") for m in spec["write_methods"]):
        df, _ = cache(spark.read.parquet(path))
        check(dsha.fingerprint(df).digest == expected, "the cached lineitem has another digest than its files")
    source = uncached(spark, path)
    out["write"] = {"rows": source.count(), "partitions": source.rdd.getNumPartitions(), "path": path,
                    "digest": expected}
    shutil.rmtree(out_dir, ignore_errors=True)  # what a stopped run left
    os.makedirs(out_dir)
    methods = write_methods(spark, path, df, out_dir, expected, spec["write_methods"])
    out["write"]["results"] = runner.run(methods, "write")
    shutil.rmtree(out_dir, ignore_errors=True)
    if df is not None:
        df.unpersist(blocking=True)


def redigest_phase(spark, runner, spec, out):
    # A table of many files with a manifest (built once under bench/data/): a full hash, and fingerprint_path with the
    # manifest up to date and with one file changed. Every answer is checked against a full hash of the same files.
    import shutil

    import dsha

    table, files = spec["files_table"], spec["files"]
    keep = table + "-keep"  # the changed file's original and its replacement (FileChange)
    for attempt in (1, 2):
        if not has_files_table(table, files):
            shutil.rmtree(keep, ignore_errors=True)
            make_files_table(spark, spec["lineitem"], table, files)
        change = FileChange(spark, table, keep)  # undoes a change a stopped run left
        r = dsha.fingerprint_path(spark, table)
        if (r.files_total, r.files_read) == (files, 0) and not r.warnings:
            break
        log(f"the manifest of {table} is not up to date ({r.files_read} of {r.files_total} files to read, "
            f"warnings {r.warnings}): rebuilding the table")
        check(attempt == 1, "a freshly written table's manifest is not up to date")
        shutil.rmtree(table)
    full = dsha.fingerprint(spark.read.parquet(table)).digest
    check(full == r.digest, f"the manifest's digest {r.digest} is not the full hash of the files {full}")
    change.apply()
    try:
        changed = dsha.fingerprint(spark.read.parquet(table)).digest
    finally:
        change.undo()
    check(changed != full, "the changed file did not change the digest")
    expected = {"full": full, "changed": changed}
    rows = spark.read.parquet(table).count()
    out["redigest"] = {"rows": rows, "files": files, "path": table, "changed_file": change.name,
                       "digests": expected}
    out["redigest"]["results"] = runner.run(
        redigest_methods(spark, table, files, change, expected, spec["redigest_methods"]), "redigest")


PHASES = {"suite": suite_phase, "parallel": parallel_phase, "scaling": scaling_phase, "profile": profile_phase,
          "write": write_phase, "redigest": redigest_phase, "goals": goals_phase}


def jvm_cpu_seconds(spark):
    """A function giving the CPU seconds the Spark JVM (driver and, in local mode, executors) has used: every thread,
    compilation and GC included, from /proc. On a shared machine it is much steadier than wall time, which counts
    waiting for a core. None where it cannot be read."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)  # the JVM PySpark started (spark-submit execs java)
    stat = f"/proc/{proc.pid}/stat" if proc is not None else None
    if stat is None or not os.path.exists(stat):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        with open(stat) as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command name: state, ppid, ...
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime

    return cpu


def worker(spec):
    """The child process: runs one phase as the spec says and returns what it measured."""
    phase = spec["phase"]
    extra = spec.get("extra_java_options")
    spark = spark_session(spec["master"], spec["driver_memory"], extra)
    runner = Runner(spec["rounds"], spec["slow_rounds"], spec["warmup"], jvm_cpu_seconds(spark))
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
