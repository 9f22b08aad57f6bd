"""The `goals` phase (`dev/run bench --phases goals`): every row of issue 35's table measured in one Spark session,
as same-run ratios, with the machine's load at every run. With `--baseline-jar OLD.jar` the phase runs twice as many
children, alternating the old jar and the current one (old, new, old, new, ...), and reports both columns: the
before/after table of a change, measured on the same machine in the same minutes.

One child (`local[2]`) holds, cached: TPC-H lineitem (the noop scan, the hashes and every digest mode), and for the
diff rows the lineitem rows with `l_orderkey <= 1,500,000` (about 1.5M rows) and a copy of them with exactly
`DIFF_K` differing rows (bench/diff_data.py). The Arrow engine's row hashes lineitem in memory in the same process
(pyarrow table read once, untimed). Every method runs once per round-robin round; the figures are medians."""
import os
import statistics

from common import RESULTS, loadavg, log, sf_label, write_results

DIFF_K = 120
DIFF_ORDERKEYS = 1_500_000
KEYED_V1 = "dsha_keyed('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', *)"
# The methods, in round-robin order: (name, description, slow?). Slow ones run --slow-rounds times.
METHODS = [
    ("scan_noop", "cached lineitem: df.write.format('noop')", False),
    ("xxhash64_bit_xor", "cached lineitem: bit_xor(xxhash64(*))", False),
    ("dsha", "cached lineitem: dsha(*)", False),
    ("dsha_keyed_v2", "cached lineitem: dsha_keyed(key, *) as dsha-keyed-v2", False),
    ("dsha_keyed", "cached lineitem: dsha_keyed(key, *) as dsha-keyed-v1 (HMAC-SHA-256)", False),
    ("dsha_secure", "cached lineitem: dsha_secure(*)", True),
    ("dsha_secure_v2", "cached lineitem: dsha_secure_v2(*)", False),
    ("parquet_scan_noop", "lineitem from Parquet (uncached): write.format('noop')", False),
    ("parquet_dsha", "lineitem from Parquet (uncached): dsha(*)", False),
    ("digest_both", f"{DIFF_ORDERKEYS // 10**5 / 10:g}M-row sides: dsha.equal(left, right), both digests", False),
    ("dsha_diff", f"the same sides, {DIFF_K} rows differ: dsha.diff + only_left/only_right rows counted", False),
    ("except_all", "the same sides: left.exceptAll(right).count() and right.exceptAll(left).count()", True),
    ("arrow_memory", "lineitem as one pyarrow table in this process: dsha.arrow.fingerprint", False),
]
# Issue 35's table: (measure, goal, value(medians) -> number, test(number) -> met?). Ratios of medians of one child.
GOALS = [
    ("`dsha(*)` / `bit_xor(xxhash64(*))`", "≤ 0.45", lambda m: m["dsha"] / m["xxhash64_bit_xor"], lambda v: v <= 0.45),
    ("`dsha(*)` / noop scan, cached", "≤ 1.10", lambda m: m["dsha"] / m["scan_noop"], lambda v: v <= 1.10),
    ("`dsha(*)` / noop scan, from Parquet", "≤ 1.05", lambda m: m["parquet_dsha"] / m["parquet_scan_noop"],
     lambda v: v <= 1.05),
    ("fastest keyed (`dsha-keyed-v2`) / `dsha(*)`", "≤ 1.2", lambda m: m["dsha_keyed_v2"] / m["dsha"],
     lambda v: v <= 1.2),
    ("`dsha-keyed-v1` / `dsha(*)`", "—", lambda m: m["dsha_keyed"] / m["dsha"], None),
    ("fastest public secure (`dsha_secure_v2(*)`) / `dsha(*)`", "≤ 3.0", lambda m: m["dsha_secure_v2"] / m["dsha"],
     lambda v: v <= 3.0),
    ("`dsha_secure(*)` (dsha-secure-v1) / `dsha(*)`", "—", lambda m: m["dsha_secure"] / m["dsha"], None),
    (f"`exceptAll` both ways / `dsha.diff` with rows fetched ({DIFF_K} rows differ)", "≥ 10",
     lambda m: m["except_all"] / m["dsha_diff"], lambda v: v >= 10),
    ("`dsha.diff` / digests of both sides", "≤ 2.5", lambda m: m["dsha_diff"] / m["digest_both"], lambda v: v <= 2.5),
    # The Arrow engine runs in Python: the JVM's CPU seconds do not count it, so this row is wall time only.
    ("Arrow engine in memory / `dsha(*)`, rows/s", "≥ 1", lambda m: m["dsha"] / m.get("arrow_memory", 0),
     lambda v: v >= 1),
]


def goals_phase(spark, runner, spec, out):
    """The child: caches the inputs, checks that the engines agree, then runs METHODS round-robin."""
    import pyarrow.dataset as ds
    from diff_data import Failures, make_copy
    from diff_methods import methods_for
    from methods import check, lineitem_methods
    from pyspark.sql import functions as F
    from runner import cache

    import dsha
    import dsha.arrow

    path = spec["lineitem"]
    selected = spec["goal_methods"]
    diffs = [name for name in ("digest_both", "dsha_diff", "except_all") if name in selected]
    df, rows = cache(spark.read.parquet(path))
    digest = dsha.fingerprint(df).digest
    out["goals"] = {"rows": rows, "partitions": df.rdd.getNumPartitions(), "diff_rows": [0, 0], "digest": digest,
                    "jar": os.path.basename(os.environ.get("DSHA_JAR", ""))}
    methods = {m[0]: m for m in lineitem_methods(spark, df, None, path, [x for x, _, _ in METHODS[:9]])}
    methods["dsha_secure"] = ("dsha_secure", methods["dsha_secure"][1], True)
    failures = Failures()
    if diffs:
        left, left_rows = cache(spark.read.parquet(path).filter(F.col("l_orderkey") <= DIFF_ORDERKEYS))
        right, right_rows = make_copy(spark, left, DIFF_K)
        out["goals"]["diff_rows"] = [left_rows, right_rows]
        for m in methods_for(spark, left, right, DIFF_K, diffs, {}, failures, False, 0):
            methods[m[0]] = m
    if "arrow_memory" in selected:
        table = ds.dataset(path, format="parquet").to_table()
        check(dsha.arrow.fingerprint(table).digest == digest, "the Arrow engine and dsha(*) disagree on lineitem")
        methods["arrow_memory"] = ("arrow_memory", lambda: dsha.arrow.fingerprint(table), False)
    out["goals"]["results"] = runner.run([methods[name] for name in selected], "goals")
    out["goals"]["diff_failures"] = list(failures)
    check(not failures, f"wrong diff answers: {failures}")


def _child(run_child, base, lineitem, tmpdir, jar, label, methods):
    env_jar = os.environ.get("DSHA_JAR")
    os.environ["DSHA_JAR"] = jar  # the child's session loads this jar (bench/session.py)
    try:
        out = run_child(dict(base, phase="goals", master="local[2]", lineitem=lineitem, label=label,
                             goal_methods=methods), tmpdir)
    finally:
        if env_jar is None:
            os.environ.pop("DSHA_JAR", None)
        else:
            os.environ["DSHA_JAR"] = env_jar
    return out


def run_goals(report, base, args, lineitem, tmpdir):
    """The parent: one child per jar and alternation; the runs of a jar's children are pooled."""
    from runner import run_child

    jars = {"this jar": os.environ.get("DSHA_JAR", "")}
    if args.baseline_jar:
        jars = {"before": os.path.abspath(args.baseline_jar), "after": jars["this jar"]}
    alternations = args.alternations or 1
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    methods = [name for name, _, _ in METHODS if not only or name in only]
    pooled = {label: {} for label in jars}
    report["goals"] = {"jars": jars, "children": []}
    for i in range(alternations):
        for label, jar in jars.items():
            log(f"goals: child {i + 1}/{alternations}, {label} ({os.path.basename(jar)})")
            out = _child(run_child, base, lineitem, tmpdir, jar, label, methods)
            report["goals"]["children"].append(dict(out["goals"], label=label, load_start=out["load_start"],
                                                    load_end=out["load_end"]))
            for name, runs in out["goals"]["results"].items():
                pooled[label].setdefault(name, []).extend(runs)
            machine = out["machine"]
    report["goals"]["pooled"] = pooled
    return machine


def medians(runs, key):
    out = {}
    for name, rs in runs.items():
        xs = [r[key] for r in rs if r.get(key) is not None]
        if xs and not (key == "cpu_seconds" and name == "arrow_memory"):
            out[name] = statistics.median(xs)
    return out


def goal_rows(pooled, key="seconds"):
    """Per goal: measure, goal, and per jar label (value, met?) or None where a method did not run. key: "seconds"
    (wall) or "cpu_seconds" (the Spark JVM's CPU time, steadier on a shared machine: waiting for a core is not in
    it)."""
    meds = {label: medians(runs, key) for label, runs in pooled.items()}
    rows = []
    for measure, goal, value, test in GOALS:
        cells = {}
        for label, m in meds.items():
            try:
                v = value(m)
            except (KeyError, ZeroDivisionError):
                cells[label] = None
                continue
            cells[label] = (round(v, 2), None if test is None else bool(test(v)))
        rows.append({"measure": measure, "goal": goal, "values": cells})
    return rows


def render(report):
    g = report["goals"]
    labels = list(g["jars"])
    first = g["children"][0]
    rows = first["rows"]
    lines = [f"# Issue 35's table, one run ({report['finished']})", "", f"Command: `{report['command']}`", "",
             f"Spark {report['machine'].get('spark')}, Java {report['machine'].get('java')}, "
             f"{report['machine'].get('cores')} cores, `local[2]`; TPC-H lineitem SF {report['config']['sf']} "
             f"({rows:,} rows, cached unless from Parquet); diff sides {first['diff_rows'][0]:,} and "
             f"{first['diff_rows'][1]:,} rows ({DIFF_K} differ). Medians of round-robin rounds "
             f"({report['config']['rounds']} per child, slow methods {report['config']['slow_rounds']}), "
             f"{len(g['children'])} children" + (" alternating before/after" if len(labels) > 1 else "") + ".", "",
             f"Load average (1/5/15 min, `os.getloadavg()`): at start {report['load_start']}, at end "
             f"{report['load_end']}; per child: "
             + "; ".join(f"{c['label']} {c['load_start']} → {c['load_end']}" for c in g["children"]) + ".", "",
             "Jars: " + ", ".join(f"{label} `{os.path.basename(j)}`" for label, j in g["jars"].items()) + ".", ""]
    lines += ["Ratios of medians; `wall` from wall-clock seconds, `CPU` from the Spark JVM's CPU seconds in the same "
              "runs (on a loaded machine the steadier one).", "",
              "| measure | goal | " + " | ".join(f"{x} wall | {x} CPU" for x in labels) + " |",
              "| --- | --- |" + " ---: | ---: |" * len(labels)]

    def cell(c):
        return "—" if c is None else f"{c[0]}" + ("" if c[1] is None else (" ✓" if c[1] else " ✗"))

    for r, rc in zip(goal_rows(g["pooled"]), goal_rows(g["pooled"], "cpu_seconds")):
        cells = []
        for label in labels:
            cells += [cell(r["values"].get(label)), cell(rc["values"].get(label))]
        lines.append(f"| {r['measure']} | {r['goal']} | " + " | ".join(cells) + " |")
    lines += ["", "Arrow row: `dsha(*)` seconds / Arrow seconds on the same rows, i.e. Arrow rows/s over `dsha(*)` "
                  "rows/s.", "", "| method | " + " | ".join(f"{x} median s | {x} CPU s | {x} rows/s | {x} load1"
                                                           for x in labels) + " | description |",
              "| --- |" + " ---: | ---: | ---: | ---: |" * len(labels) + " --- |"]
    for name, description, _ in METHODS:
        cells = []
        for label in labels:
            runs = g["pooled"][label].get(name) or []
            if not runs:
                cells += ["—"] * 4
                continue
            s = statistics.median(x["seconds"] for x in runs)
            n = first["diff_rows"][0] if name in ("digest_both", "dsha_diff", "except_all") else rows
            load = statistics.median(x["load1"] for x in runs if x["load1"] is not None) if runs else None
            cpu = [x["cpu_seconds"] for x in runs if x.get("cpu_seconds") is not None]
            cpu_s = f"{statistics.median(cpu):.3f}" if cpu and name != "arrow_memory" else "—"
            cells += [f"{s:.3f} ({len(runs)})", cpu_s, f"{n / s:,.0f}", f"{load}"]
        lines.append(f"| `{name}` | " + " | ".join(cells) + f" | {description} |")
    return "\n".join(lines) + "\n"


def main(report, base, args, sf, lineitem, tmpdir):
    machine = run_goals(report, base, args, lineitem, tmpdir)
    report["machine"] = machine
    report["load_end"] = loadavg()
    import datetime as _dt

    report["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    report["goals"]["table"] = goal_rows(report["goals"]["pooled"])
    report["goals"]["table_cpu"] = goal_rows(report["goals"]["pooled"], "cpu_seconds")
    stem = args.out or os.path.join(RESULTS, f"results-goals-sf{sf_label(sf)}")
    write_results(stem, render(report), report)
