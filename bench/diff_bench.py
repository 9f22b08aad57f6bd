"""`dsha.diff` against `exceptAll` and datacompy (SPEC.md §17): `dev/run bench-diff [--quick] [--rounds 3] ...`.

One Spark session, `local[2]`, `spark.driver.memory` 6g. TPC-H lineitem (SF 1: 6,001,215 rows) is read and cached
(`cache()`, `count()`, a noop write). For each k in --ks (default 1, 100, 10,000, 100,000) a copy with exactly k
differing rows is built from it and cached the same way: the rows are picked by `xxhash64(l_orderkey, l_linenumber)`
(the smallest hashes, ties broken by the key), k/2 of them modified (`l_comment` + " [changed]" or `l_quantity` + 1,
alternately), k/4 deleted and k/4 inserted (a copy of the row under a new key, `l_linenumber` + 100, with another
comment); for k = 1 one modified row. Then, for that k, round-robin over rounds (medians):

  digest_both          dsha.equal(left, right): both digests in one query                          [the anchor]
  dsha_diff            dsha.diff(left, right) + d.only_left.count() + d.only_right.count()
  dsha_diff_spark_reader  dsha_diff with spark.dsha.readCachedBatches=false (Spark's reader of the cached tables)
  dsha_diff_cd         dsha_diff with column_digests=True (each column's digest in the first pass)
  dsha_diff_key        dsha.diff(left, right, key=["l_orderkey", "l_linenumber"]) + d.changed.count()
  except_all           left.exceptAll(right).count() and right.exceptAll(left).count()               [slow]
  datacompy            datacompy.SparkSQLCompare(spark, left, right, join_columns=the key) with its row and
                       column mismatch counts (and its report with --datacompy-report); the three DATE columns
                       cast to strings in both tables, since datacompy fails on DATE columns under Spark 4  [slow]

Every answer is checked: dsha.diff's only_left_count / only_right_count against the exceptAll counts and against
the construction (3k/4 each way; keyed: k/2 changed, k/4 only on each side), the cached frames' counts against them,
datacompy's counts against the construction. A wrong answer is printed as a failure, written into the results, and
makes the run exit non-zero. Results: bench/results/results-diff-sf<SF>.md and .json (--out to change).
"""
import argparse
import datetime as _dt
import json
import os
import sys
import time

from common import RESULTS, loadavg, log, sf_label
from data import ensure_lineitem
from diff_data import KEY, Failures, composition, expected_counts, make_copy
from diff_methods import ORDER, datacompy_date_failure, methods_for
from diff_report import med, write_report
from runner import Runner, cache, jvm_cpu_seconds
from session import machine_info, spark_session

DEFAULT_KS = [1, 100, 10_000, 100_000]
DATACOMPY_PIN = "1.1.0"  # dev/run bench-diff installs it


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor of lineitem (default 1)")
    p.add_argument("--fraction", type=float, default=None,
                   help="keep this share of lineitem's rows (by a hash of the key; default 1, --quick 0.1)")
    p.add_argument("--quick", action="store_true",
                   help="a short run while developing: 10%% of the rows, k = 1, 100, 10,000, one round, "
                        "slow methods once")
    p.add_argument("--ks", default=None, help="comma-separated numbers of differing rows (default 1,100,10000,100000)")
    p.add_argument("--rounds", type=int, default=None, help="timed rounds per method (median; default 3, quick 1)")
    p.add_argument("--slow-rounds", type=int, default=None,
                   help="timed rounds of exceptAll and datacompy (default = --rounds)")
    p.add_argument("--big-k", type=int, default=100_000,
                   help="from this k on, the slow methods run --big-slow-rounds times (default 100,000)")
    p.add_argument("--big-slow-rounds", type=int, default=1, help="(default 1)")
    p.add_argument("--datacompy-rounds", type=int, default=None,
                   help="timed rounds of datacompy, the slowest (default = the slow rounds of that k)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed warm-up rounds of the fast methods, before the first k only (default 1)")
    p.add_argument("--skip", default="", help="comma-separated methods to leave out, e.g. datacompy,dsha_diff_cd")
    p.add_argument("--datacompy-report", action="store_true",
                   help="also time datacompy's report() (sample rows per column: many more Spark jobs)")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--out", default=None, help="results file stem (default bench/results/results-diff-sf<SF>)")
    p.add_argument("--render", metavar="JSON", help="only write the .md of a results .json again (no Spark)")
    return p.parse_args()


def main():
    args = parse_args()
    if args.render:
        with open(args.render) as f:
            write_report(json.load(f), args.render.removesuffix(".json"))
        return 0
    sf = int(args.sf) if float(args.sf).is_integer() else args.sf
    fraction = args.fraction if args.fraction is not None else (0.1 if args.quick else 1.0)
    ks = ([int(x) for x in args.ks.split(",")] if args.ks else ([1, 100, 10_000] if args.quick else DEFAULT_KS))
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    slow_rounds = args.slow_rounds if args.slow_rounds is not None else rounds
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - set(ORDER)
    if unknown:
        raise SystemExit(f"unknown methods {sorted(unknown)} (methods: {', '.join(ORDER)})")
    selected = [n for n in ORDER if n not in skip]
    started = _dt.datetime.now().isoformat(timespec="seconds")
    report = {"command": "dev/run bench-diff " + " ".join(sys.argv[1:]), "started": started,
              "config": {"sf": sf, "fraction": fraction, "ks": ks, "rounds": rounds, "slow_rounds": slow_rounds,
                         "big_k": args.big_k, "big_slow_rounds": min(args.big_slow_rounds, slow_rounds),
                         "datacompy_rounds": args.datacompy_rounds, "warmup": args.warmup,
                         "driver_memory": args.driver_memory, "master": "local[2]",
                         "methods": selected, "datacompy_report": args.datacompy_report},
              "load_start": loadavg(), "per_k": []}
    failures = Failures()
    path = ensure_lineitem(sf, 4)
    spark = spark_session("local[2]", args.driver_memory)
    from pyspark.sql import functions as F

    report["machine"] = machine_info(spark)
    report["shuffle_partitions"] = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        import datacompy

        report["datacompy_version"] = datacompy.__version__
        if datacompy.__version__ != DATACOMPY_PIN:
            log(f"datacompy {datacompy.__version__} is installed, dev/run bench-diff pins {DATACOMPY_PIN}")
    except Exception as e:  # noqa: BLE001
        report["datacompy_version"] = None
        report["datacompy_import_error"] = f"{type(e).__name__}: {e}"
        log(f"datacompy cannot be imported ({report['datacompy_import_error']}): its runs are left out")
    source = spark.read.parquet(path)
    if fraction < 1:
        source = source.filter(F.pmod(F.xxhash64(*KEY), 1000) < round(fraction * 1000))
    left, rows = cache(source)
    report["rows"], report["partitions"] = rows, left.rdd.getNumPartitions()
    log(f"lineitem SF {sf}{f' ({fraction:.0%})' if fraction < 1 else ''}: {rows:,} rows cached in "
        f"{report['partitions']} partitions; load {loadavg()}")
    if "datacompy" in selected and report["datacompy_version"]:
        report["datacompy_date_error"] = datacompy_date_failure(spark, left)
        log(f"datacompy on DATE columns as they are: {report['datacompy_date_error'] or 'no error'}")
    cpu = jvm_cpu_seconds(spark)
    for n_k, k in enumerate(ks):
        comp = dict(zip(("modified", "deleted", "inserted"), composition(k)))
        t = time.perf_counter()
        right, right_rows = make_copy(spark, left, k)
        failures.check(right_rows == rows - comp["deleted"] + comp["inserted"],
                       f"k={k}: the copy has {right_rows} rows, expected {rows - comp['deleted'] + comp['inserted']}")
        log(f"k={k:,}: copy with {comp} cached ({right_rows:,} rows, {right.rdd.getNumPartitions()} partitions) in "
            f"{time.perf_counter() - t:.1f} s; load {loadavg()}")
        state = {}
        chosen = [n for n in selected if not (n == "datacompy" and not report["datacompy_version"])]
        slow = min(args.big_slow_rounds, slow_rounds) if k >= args.big_k else slow_rounds
        runner = Runner(rounds, slow, args.warmup if n_k == 0 else 0, cpu)
        dc_rounds = min(slow, args.datacompy_rounds) if args.datacompy_rounds is not None else slow
        results = runner.run(methods_for(spark, left, right, k, chosen, state, failures, args.datacompy_report,
                                         dc_rounds), f"k={k:,}")
        if "datacompy" in results:
            results["datacompy"] = results["datacompy"][:len(state.get("datacompy", []))]
        per_k = {"k": k, "composition": comp, "right_rows": right_rows, "expected": expected_counts(k),
                 "facts": {n: v for n, v in state.items() if isinstance(v, list)}}
        if state.get("datacompy_error"):
            per_k["datacompy_error"] = state["datacompy_error"]
            results.pop("datacompy", None)
        elif "datacompy" in selected and not report["datacompy_version"]:
            per_k["datacompy_error"] = report.get("datacompy_import_error")
        per_k["results"] = results
        # the same answer on every run, and the same as exceptAll's
        for name in ("dsha_diff", "dsha_diff_cd"):
            seen = {(f["only_left_count"], f["only_right_count"]) for f in per_k["facts"].get(name, [])}
            ea = {(f["only_left"], f["only_right"]) for f in per_k["facts"].get("except_all", [])}
            if seen and ea:
                failures.check(seen == ea, f"k={k}: {name} found {sorted(seen)} rows only left/right, exceptAll "
                                           f"{sorted(ea)}")
        report["per_k"].append(per_k)
        right.unpersist(blocking=True)
        log(f"k={k:,}: " + ", ".join(f"{n} {med(r):.2f} s" for n, r in results.items() if r))
    report["load_end"] = loadavg()
    report["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    report["failures"] = list(failures)
    label = sf_label(sf) + (f"-sample{sf_label(fraction)}" if fraction < 1 else "")
    stem = args.out or os.path.join(RESULTS, f"results-diff-sf{label}")
    write_report(report, stem)
    spark.stop()
    if failures:
        log(f"{len(failures)} CORRECTNESS FAILURE(S): see {stem}.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
