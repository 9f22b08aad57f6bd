"""`dsha check` on a Delta table (issue 18): `dev/run bench-delta [--sf 1] [--rounds 3] [--files 200]`.

Runs in the virtual environment of a Spark line that has a Delta release (dsha/_delta_versions.py), one session,
`local[2]`, on TPC-H lineitem written as a Delta table of `--files` files. Round-robin over rounds (medians):

  full             dsha.fingerprint(spark.read.format("delta").load(path)): every file read   [anchor]
  log              reading the log alone: the version's file list (Delta's snapshot, `inputFiles()`)
  check_unchanged  dsha.changed({t: dsha.Path(path, "delta")}, store=...) with the table recorded and unchanged
  check_optimized  the same right after an OPTIMIZE (untimed), which rewrote every file: a layout-only commit

Before each round the table is put back to its first version (RESTORE, untimed) and recorded (untimed), so every
round's OPTIMIZE compacts the same files. Every answer is checked: "unchanged", and the digest of a full hash.
Targets: check_unchanged <= log (+ a fixed 0.3 s of bookkeeping), check_optimized <= 0.05 x full.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

from common import DATA, RESULTS, log, loadavg, sf_label, write_results
from data import ensure_lineitem


def session():
    import pyspark
    from pyspark.sql import SparkSession

    import dsha
    from dsha._delta_versions import delta_for_spark

    release = delta_for_spark(pyspark.__version__)
    if release is None:
        raise SystemExit(f"no Delta release for Spark {pyspark.__version__} (dsha/_delta_versions.py)")
    b = (SparkSession.builder.master("local[2]").appName("dsha-bench-delta")
         .config("spark.jars.packages", release.maven_coordinate)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false"))
    spark = dsha.configure(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--files", type=int, default=200)
    args = p.parse_args()
    import dsha

    sf = int(args.sf) if float(args.sf).is_integer() else args.sf
    spark = session()
    lineitem = ensure_lineitem(sf, 4)
    path = os.path.join(DATA, f"delta-sf{sf_label(sf)}-{args.files}")
    if not os.path.isdir(os.path.join(path, "_delta_log")):
        log(f"writing {path}: lineitem SF {sf} as a Delta table of {args.files} files")
        spark.read.parquet(lineitem).repartition(args.files).write.format("delta").save(path)
    first = 0
    table = dsha.Path(path, "delta")
    store = tempfile.mkdtemp(prefix="dsha-bench-delta-store-")
    expected = None
    times = {k: [] for k in ("full", "log", "check_unchanged", "check_optimized")}
    loads = []
    for r in range(args.rounds):
        spark.sql(f"RESTORE TABLE delta.`{path}` TO VERSION AS OF {first}")  # untimed: the same files again
        dsha.record({"t": table}, store=store, name="bench", spark=spark)

        def full():
            return dsha.fingerprint(spark.read.format("delta").load(path)).digest

        def log_only():
            return len(spark.read.format("delta").load(path).inputFiles())

        def check():
            changes = dsha.changed({"t": table}, store=store, name="bench", spark=spark)
            assert not changes, [c.what for c in changes]
            return changes.current.inputs["t"].fingerprint.digest

        for name, fn in (("full", full), ("log", log_only), ("check_unchanged", check)):
            loads.append(loadavg()[0])
            t0 = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - t0)
            if name != "log":
                expected = expected or out
                assert out == expected, (name, out, expected)
        spark.sql(f"OPTIMIZE delta.`{path}`")  # untimed: every file rewritten, dataChange=false
        loads.append(loadavg()[0])
        t0 = time.perf_counter()
        assert check() == expected
        times["check_optimized"].append(time.perf_counter() - t0)
        log(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()) + f", load {loadavg()}")
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = spark.read.format("delta").load(path).count()
    lines = [f"# `dsha check` on a Delta table: lineitem SF {sf} ({rows:,} rows, {args.files} files)", "",
             f"Spark {spark.version}, local[2], medians of {args.rounds} rounds; 1-minute load "
             f"{min(loads):.1f}-{max(loads):.1f}. Digest `{expected[:24]}…` in every case.", "",
             "| measurement | median s | / full hash |", "| --- | ---: | ---: |"]
    for k, what in (("full", "full hash (every file read)  [anchor]"), ("log", "reading the log: the file list"),
                    ("check_unchanged", "`dsha.changed`, unchanged"),
                    ("check_optimized", "`dsha.changed` right after OPTIMIZE (unchanged content)")):
        lines.append(f"| {what} | {med[k]:.3f} | {med[k] / med['full']:.3f} |")
    lines += ["", f"- unchanged vs reading the log: {med['check_unchanged']:.2f} s vs {med['log']:.2f} s",
              f"- after OPTIMIZE / full hash: **{med['check_optimized'] / med['full']:.3f}** (target <= 0.05)"]
    md = "\n".join(lines) + "\n"
    stem = os.path.join(RESULTS, f"results-delta-sf{sf_label(sf)}")
    write_results(stem, md, {"times": times, "median": med, "rows": rows, "files": args.files, "loads": loads,
                             "spark": spark.version, "digest": expected})
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
