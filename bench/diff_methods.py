"""The methods `dev/run bench-diff` (bench/diff_bench.py) compares on one copy: `Runner` entries that check each answer
against the copy's construction and keep each run's facts."""
import traceback

from common import log
from diff_data import KEY, expected_counts

DATES = ["l_shipdate", "l_commitdate", "l_receiptdate"]
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
