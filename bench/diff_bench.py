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
import statistics
import sys
import time
import traceback

from common import RESULTS, log, loadavg, sf_label, write_results
from data import ensure_lineitem
from runner import Runner, cache, jvm_cpu_seconds
from session import machine_info, spark_session

KEY = ["l_orderkey", "l_linenumber"]
DATES = ["l_shipdate", "l_commitdate", "l_receiptdate"]
DEFAULT_KS = [1, 100, 10_000, 100_000]
DATACOMPY_PIN = "1.1.0"  # dev/run bench-diff installs it

DESCRIPTIONS = {
    "digest_both": "`dsha.equal(left, right)`: both `dsha(*)` digests in one query. **The anchor.**",
    "dsha_diff": "`dsha.diff(left, right)` (defaults) + `d.only_left.count()` + `d.only_right.count()`",
    "dsha_diff_cd": "the same with `column_digests=True` (each column's digest in the first pass)",
    "dsha_diff_spark_reader": "`dsha_diff` with `spark.dsha.readCachedBatches=false`: the cached tables read by "
                              "Spark's reader instead of dsha's decoder of the cache's batches",
    "dsha_diff_key": "`dsha.diff(left, right, key=[\"l_orderkey\", \"l_linenumber\"])` + `d.changed.count()`",
    "except_all": "`left.exceptAll(right).count()` and `right.exceptAll(left).count()`",
    "datacompy": "datacompy `SparkSQLCompare(spark, left, right, join_columns=[l_orderkey, l_linenumber])`: its "
                 "constructor (joins, per-column match counts), unique-row counts, `count_matching_rows()`; "
                 "DATE columns cast to strings",
}
SLOW = {"except_all", "datacompy"}
ORDER = ["digest_both", "dsha_diff", "dsha_diff_spark_reader", "dsha_diff_cd", "dsha_diff_key", "except_all",
         "datacompy"]


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


class Failures(list):
    def check(self, ok, message):
        if not ok:
            log(f"CORRECTNESS FAILURE: {message}")
            self.append(message)
        return ok


def composition(k):
    """(modified, deleted, inserted) rows of the copy with k differing rows."""
    if k == 1:
        return 1, 0, 0
    modified, deleted = k // 2, k // 4
    return modified, deleted, k - modified - deleted


def expected_counts(k):
    m, d, i = composition(k)
    return {"only_left": m + d, "only_right": m + i, "distinct": 2 * m + d + i,
            "key_changed": m, "key_only_left": d, "key_only_right": i}


def make_copy(spark, left, k):
    """left with exactly k differing rows (composition(k)), deterministic: the rows with the smallest
    xxhash64(l_orderkey, l_linenumber), ranked by (hash, key)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    m, d, i = composition(k)
    picked = (left.select(*KEY, F.xxhash64(*KEY).alias("h")).orderBy("h", *KEY).limit(m + d + i)
              .withColumn("rank", F.row_number().over(Window.orderBy("h", *KEY)))
              .withColumn("role", F.when(F.col("rank") <= m, "modify").when(F.col("rank") <= m + d, "delete")
                          .otherwise("insert"))
              .drop("h"))
    picked = picked.cache()
    check_n = picked.count()
    assert check_n == m + d + i, (check_n, m, d, i)
    quantity_type = dict(left.dtypes)["l_quantity"]
    joined = left.join(F.broadcast(picked), KEY, "left")
    modify = F.col("role") == "modify"
    odd = F.col("rank") % 2 == 1
    kept = (joined.filter(F.col("role").isNull() | (F.col("role") != "delete"))
            .withColumn("l_comment", F.when(modify & odd, F.concat("l_comment", F.lit(" [changed]")))
                        .otherwise(F.col("l_comment")))
            .withColumn("l_quantity", F.when(modify & ~odd, (F.col("l_quantity") + 1).cast(quantity_type))
                        .otherwise(F.col("l_quantity")))
            .select(*left.columns))
    inserted = (left.join(F.broadcast(picked.filter(F.col("role") == "insert")), KEY)
                .withColumn("l_linenumber", F.col("l_linenumber") + 100)
                .withColumn("l_comment", F.concat(F.lit("inserted: "), F.col("l_comment")))
                .select(*left.columns).coalesce(1))
    right, rows = cache(kept.unionByName(inserted))
    picked.unpersist()
    return right, rows


def datacompy_date_failure(spark, left):
    """datacompy on 1,000 rows of lineitem with its DATE columns as they are: the error it raises (None if none)."""
    try:
        from datacompy import SparkSQLCompare
    except Exception as e:  # noqa: BLE001
        return f"datacompy cannot be imported: {type(e).__name__}: {e}"
    small = left.limit(1000)
    spark.sparkContext.setLogLevel("OFF")  # Spark logs the AnalysisException with the whole plan at ERROR
    try:
        c = SparkSQLCompare(spark, small, small, join_columns=KEY)
        c.intersect_rows.unpersist()
        return None
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
    finally:
        spark.sparkContext.setLogLevel("WARN")


def methods_for(spark, left, right, k, selected, state, failures, datacompy_report, datacompy_rounds):
    """(name, fn, slow, before, after) for Runner.run; each run's facts go to state[name] (a list)."""
    import dsha
    from pyspark.sql import functions as F

    exp = expected_counts(k)
    holder = {}

    def unpersist():
        d = holder.pop("diff", None)
        if d is not None:
            d.unpersist()
        c = holder.pop("compare", None)
        if c is not None:
            c.intersect_rows.unpersist()

    def digest_both():
        r = dsha.equal(left, right)
        failures.check(not r.equal, f"k={k}: dsha.equal says the tables are equal")
        state["digest_both"].append({"equal": r.equal, "reason": r.reason})

    def diff_run(name, conf=None, **kw):
        def counted():
            d = dsha.diff(left, right, **kw)
            holder["diff"] = d
            return d, d.only_left.count(), d.only_right.count()

        def run():
            for setting, value in (conf or {}).items():
                spark.conf.set(setting, value)
            try:
                d, a, b = counted()
            finally:
                for setting in conf or {}:
                    spark.conf.unset(setting)
            fact = {"method": d.method, "sketch_cells": d.sketch_cells, "cells_used": d.cells_used,
                    "distinct_differences": d.distinct_differences, "only_left_count": d.only_left_count,
                    "only_right_count": d.only_right_count, "only_left_rows": a, "only_right_rows": b,
                    "equal": d.equal}
            state[name].append(fact)
            failures.check((a, b) == (d.only_left_count, d.only_right_count),
                           f"k={k} {name}: only_left/only_right hold {a}/{b} rows, the Diff says "
                           f"{d.only_left_count}/{d.only_right_count}")
            failures.check((a, b) == (exp["only_left"], exp["only_right"]),
                           f"k={k} {name}: {a}/{b} rows only left/right, the copy has {exp['only_left']}/"
                           f"{exp['only_right']}")
            failures.check(d.distinct_differences == exp["distinct"],
                           f"k={k} {name}: {d.distinct_differences} distinct differing digests, expected "
                           f"{exp['distinct']}")
        return run

    def diff_key():
        d = dsha.diff(left, right, key=KEY)
        holder["diff"] = d
        changed = d.changed.count()
        state["dsha_diff_key"].append({"method": d.method, "sketch_cells": d.sketch_cells, "cells_used": d.cells_used,
                                       "distinct_differences": d.distinct_differences,
                                       "changed_count": d.changed_count, "changed_rows": changed,
                                       "only_left_count": d.only_left_count, "only_right_count": d.only_right_count,
                                       "duplicate_keys": d.duplicate_keys,
                                       "columns": {c: n for c, n in d.columns.items() if n}})
        got = (d.changed_count, d.only_left_count, d.only_right_count)
        want = (exp["key_changed"], exp["key_only_left"], exp["key_only_right"])
        failures.check(got == want, f"k={k} dsha_diff_key: changed/only left/only right {got}, expected {want}")
        # each modified row differs in exactly one column: one row of `changed` per modified row
        failures.check(changed == exp["key_changed"],
                       f"k={k} dsha_diff_key: d.changed has {changed} rows, expected {exp['key_changed']}")

    def except_all():
        a = left.exceptAll(right).count()
        b = right.exceptAll(left).count()
        state["except_all"].append({"only_left": a, "only_right": b})
        failures.check((a, b) == (exp["only_left"], exp["only_right"]),
                       f"k={k} except_all: {a}/{b}, the copy has {exp['only_left']}/{exp['only_right']}")

    def as_strings(df):
        return df.select(*[F.col(c).cast("string").alias(c) if c in DATES else F.col(c) for c in df.columns])

    def datacompy_run():
        if state.get("datacompy_error") or len(state["datacompy"]) >= datacompy_rounds:
            return  # such runs are dropped from the results
        try:
            from datacompy import SparkSQLCompare

            c = SparkSQLCompare(spark, as_strings(left), as_strings(right), join_columns=KEY)
            holder["compare"] = c
            fact = {"df1_unq_rows": c.df1_unq_rows.count(), "df2_unq_rows": c.df2_unq_rows.count(),
                    "intersect_rows": c.intersect_rows.count(), "matching_rows": c.count_matching_rows(),
                    "column_mismatches": {s["column"]: s["unequal_cnt"] for s in c.column_stats
                                          if s["unequal_cnt"]}}
            if datacompy_report:
                fact["report_chars"] = len(c.report())
        except Exception as e:  # noqa: BLE001
            state["datacompy_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            log(f"datacompy failed: {state['datacompy_error']}\n{traceback.format_exc()}")
            return
        state["datacompy"].append(fact)
        got = (fact["df1_unq_rows"], fact["df2_unq_rows"], fact["intersect_rows"] - fact["matching_rows"],
               sum(fact["column_mismatches"].values()))
        want = (exp["key_only_left"], exp["key_only_right"], exp["key_changed"], exp["key_changed"])
        failures.check(got == want, f"k={k} datacompy: unique left/right rows, mismatching rows, column mismatches "
                                    f"{got}, expected {want}")

    fns = {"digest_both": digest_both, "dsha_diff": diff_run("dsha_diff"),
           "dsha_diff_spark_reader": diff_run("dsha_diff_spark_reader", {"spark.dsha.readCachedBatches": "false"}),
           "dsha_diff_cd": diff_run("dsha_diff_cd", column_digests=True), "dsha_diff_key": diff_key,
           "except_all": except_all, "datacompy": datacompy_run}
    for name in fns:
        state.setdefault(name, [])
    return [(name, fns[name], name in SLOW, None, unpersist) for name in ORDER if name in selected]


def med(runs, key="seconds"):
    values = [r[key] for r in runs or [] if r.get(key) is not None]
    return statistics.median(values) if values else None


def ratio_row(k, per_k):
    """The same-run ratios of one k, each with its goal and status."""
    m = {n: med(r) for n, r in per_k["results"].items()}
    cpu = {n: med(r, "cpu_seconds") for n, r in per_k["results"].items()}
    facts = per_k["facts"]
    rows = []

    def add(name, value, goal, ok, note=""):
        status = "n/a" if ok is None else ("met" if ok else "MISSED")
        rows.append({"k": k, "ratio": name, "value": value, "goal": goal, "status": status, "note": note})

    def also(a, b):
        """The same ratio of JVM CPU seconds."""
        return [f"JVM CPU time: {cpu[a] / cpu[b]:.2f}"] if cpu.get(a) and cpu.get(b) else []

    diff = m.get("dsha_diff")
    if diff and m.get("digest_both"):
        r = diff / m["digest_both"]
        add("dsha.diff / digest both", round(r, 2), "<= 3" if k <= 10_000 else "(none)",
            (r <= 3) if k <= 10_000 else None, "; ".join(also("dsha_diff", "digest_both")))
    if m.get("dsha_diff_cd") and m.get("digest_both"):
        r = m["dsha_diff_cd"] / m["digest_both"]
        add("dsha.diff with column digests / digest both", round(r, 2), "(none: not the default)", None,
            "; ".join(also("dsha_diff_cd", "digest_both")))
    if diff and m.get("except_all"):
        r = m["except_all"] / diff
        goal = 10 if k <= 10_000 else 3
        add("exceptAll both ways / dsha.diff", round(r, 2), f">= {goal}", r >= goal,
            "; ".join(also("except_all", "dsha_diff")))
    if diff and m.get("datacompy"):
        r = m["datacompy"] / diff
        notes = [f"/ keyed dsha.diff: {m['datacompy'] / m['dsha_diff_key']:.2f}"] if m.get("dsha_diff_key") else []
        add("datacompy / dsha.diff", round(r, 2), ">= 10", r >= 10,
            "; ".join(notes + also("datacompy", "dsha_diff")) + " (datacompy's Python-side time is not in the "
            "JVM's CPU)")
    elif per_k.get("datacompy_error"):
        add("datacompy / dsha.diff", None, ">= 10", None, per_k.get("datacompy_error") or "no run")
    d = facts.get("dsha_diff") or []
    if d and d[0].get("cells_used") and d[0].get("distinct_differences"):
        r = d[0]["cells_used"] / d[0]["distinct_differences"]
        add("sketch cells used / distinct differing digests", round(r, 2), "<= 2", r <= 2,
            f"{d[0]['cells_used']:,} / {d[0]['distinct_differences']:,}")
    return rows


def fmt(x, spec=".2f"):
    return "—" if x is None else format(x, spec)


def render(report):
    ks = [p["k"] for p in report["per_k"]]
    c = report["config"]
    mach = report["machine"]
    loads = [r["load1"] for p in report["per_k"] for runs in p["results"].values() for r in runs
             if r.get("load1") is not None]
    out = [f"# dsha.diff against exceptAll and datacompy: lineitem SF {c['sf']}"
           + (f", {c['fraction']:.0%} of its rows" if c["fraction"] < 1 else ""), "",
           f"{report['finished']}. Command: `{report['command']}`", "",
           f"- {mach.get('cores')} cores ({mach.get('cpu')}), {mach.get('memory_gb')} GB; Spark {mach.get('spark')}, "
           f"{mach.get('java')}; Python {mach.get('python')}; datacompy {report.get('datacompy_version')}",
           f"- local[2], driver memory {c['driver_memory']}, `spark.sql.shuffle.partitions` "
           f"{report['shuffle_partitions']} (the default), AQE on; left: {report['rows']:,} rows in "
           f"{report['partitions']} partitions, cached (cache, count, noop write); each copy cached the same way",
           f"- medians of {c['rounds']} round-robin rounds (exceptAll and datacompy: {c['slow_rounds']}, "
           f"{c['big_slow_rounds']} from k = {c['big_k']:,}"
           + (f"; datacompy at most {c['datacompy_rounds']}" if c.get("datacompy_rounds") is not None else "")
           + f"); {c['warmup']} untimed warm-up round of the fast methods before the first k",
           f"- 1-minute load average: {report['load_start'][0]} at the start, {report['load_end'][0]} at the end, "
           f"{min(loads) if loads else '?'}-{max(loads) if loads else '?'} over the timed runs (2 cores: above ~2 "
           "the JVM did not get both; the machine is shared)", ""]
    if report["failures"]:
        out += ["## CORRECTNESS FAILURES", ""] + [f"- {f}" for f in report["failures"]] + [""]
    else:
        out += ["Every answer checked (dsha.diff against exceptAll and the construction, keyed diff and datacompy "
                "against the construction): **all correct**.", ""]
    out += ["## Targets (same-run ratios of medians)", "", "| k | ratio | value | goal | status | note |",
            "| ---: | --- | ---: | --- | --- | --- |"]
    for t in report["targets"]:
        out.append(f"| {t['k']:,} | {t['ratio']} | {fmt(t['value'])} | {t['goal']} | {t['status']} | {t['note']} |")
    out += ["", "## Median seconds", "", "| method | " + " | ".join(f"k = {k:,}" for k in ks) + " |",
            "| --- |" + " ---: |" * len(ks)]
    names = [n for n in ORDER if any(n in p["results"] for p in report["per_k"])]
    for n in names:
        cells = []
        for p in report["per_k"]:
            runs = p["results"].get(n)
            if not runs:
                cells.append("failed" if n == "datacompy" and p.get("datacompy_error") else "—")
                continue
            anchor = med(p["results"]["digest_both"]) if p["results"].get("digest_both") else None
            cells.append(f"{med(runs):.2f}" + (f" ({med(runs) / anchor:.1f}x)" if anchor and n != "digest_both"
                                                else ""))
        out.append(f"| `{n}` | " + " | ".join(cells) + " |")
    out += ["", "(x) = over `digest_both` of the same k.", "", "## dsha.diff's sketch", "",
            "| k | rows only left / right | distinct differing digests | method | sketch cells | cells used | "
            "cells used / distinct |", "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for p in report["per_k"]:
        d = (p["facts"].get("dsha_diff") or [None])[0]
        if d:
            ratio = (d["cells_used"] / d["distinct_differences"]) if d["cells_used"] and d["distinct_differences"] \
                else None
            out.append(f"| {p['k']:,} | {d['only_left_count']:,} / {d['only_right_count']:,} | "
                       f"{d['distinct_differences']:,} | {d['method']} | {d['sketch_cells']:,} | "
                       f"{fmt(d['cells_used'], ',')} | {fmt(ratio)} |")
    for p in report["per_k"]:
        out += ["", f"## k = {p['k']:,}: {p['composition']['modified']:,} modified, {p['composition']['deleted']:,} "
                    f"deleted, {p['composition']['inserted']:,} inserted ({p['right_rows']:,} rows on the right)", "",
                "| method | runs | median s | min-max s | / digest both | CPU s (median) | load1 (median) |",
                "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
        anchor = med(p["results"].get("digest_both") or [])
        for n in names:
            runs = p["results"].get(n) or []
            if not runs:
                continue
            s = [r["seconds"] for r in runs]
            cpu = [r["cpu_seconds"] for r in runs if "cpu_seconds" in r]
            load = [r["load1"] for r in runs if r.get("load1") is not None]
            out.append(f"| `{n}` | {len(runs)} | {med(runs):.3f} | {min(s):.2f}-{max(s):.2f} | "
                       f"{fmt(med(runs) / anchor if anchor else None)} | "
                       f"{fmt(statistics.median(cpu) if cpu else None)} | "
                       f"{fmt(statistics.median(load) if load else None)} |")
        key = (p["facts"].get("dsha_diff_key") or [None])[0]
        if key:
            out.append("")
            out.append(f"Keyed diff: {key['changed_count']:,} changed, {key['only_left_count']:,} only left, "
                       f"{key['only_right_count']:,} only right; columns {key['columns']}; method {key['method']}.")
        dc = (p["facts"].get("datacompy") or [None])[0]
        if dc:
            out.append(f"datacompy: {dc['df1_unq_rows']:,} rows only in df1, {dc['df2_unq_rows']:,} only in df2, "
                       f"{dc['intersect_rows'] - dc['matching_rows']:,} of {dc['intersect_rows']:,} joined rows "
                       f"differ; column mismatches {dc['column_mismatches']}.")
        elif p.get("datacompy_error"):
            out.append(f"datacompy failed: `{p['datacompy_error']}`")
    out += ["", "## Methods", "", "| method | what is timed |", "| --- | --- |"]
    out += [f"| `{n}` | {DESCRIPTIONS[n]} |" for n in names]
    out += ["", "## Notes", "",
            f"- datacompy {report.get('datacompy_version')} on DATE columns as they are (untimed check on 1,000 rows): "
            + (f"`{report['datacompy_date_error']}`. So the three DATE columns are cast to strings in both tables "
               "for datacompy (inside its timed run)." if report.get("datacompy_date_error")
               else "no error (the DATE columns are cast to strings anyway, for the same plans as before)."),
            "- The copies: rows picked by the smallest `xxhash64(l_orderkey, l_linenumber)`; modified rows alternate "
            "`l_comment` + \" [changed]\" and `l_quantity` + 1; inserted rows are copies of picked rows under the "
            "key (l_orderkey, l_linenumber + 100) with \"inserted: \" before the comment. So without a key each "
            "modified row is one row only left and one only right: 3k/4 each way, 3k/2 distinct digests."]
    out.append("")
    return "\n".join(out)


def write_report(report, stem):
    report["targets"] = [row for p in report["per_k"] for row in ratio_row(p["k"], p)]
    write_results(stem, render(report), report)


def main():
    args = parse_args()
    if args.render:
        with open(args.render) as f:
            write_report(json.load(f), args.render[:-len(".json")] if args.render.endswith(".json") else args.render)
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
        source = source.filter(F.pmod(F.xxhash64(*KEY), 1000) < int(round(fraction * 1000)))
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
