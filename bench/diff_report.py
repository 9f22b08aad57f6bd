"""The results of `dev/run bench-diff` (bench/diff_bench.py): medians, the same-run ratios with their targets, and the
Markdown file."""
import statistics

from common import write_results
from diff_methods import DESCRIPTIONS, ORDER


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
           (f"- {mach.get('cores')} cores ({mach.get('cpu')}), {mach.get('memory_gb')} GB; Spark {mach.get('spark')}, "
           f"{mach.get('java')}; Python {mach.get('python')}; datacompy {report.get('datacompy_version')}"),
           (f"- local[2], driver memory {c['driver_memory']}, `spark.sql.shuffle.partitions` "
           f"{report['shuffle_partitions']} (the default), AQE on; left: {report['rows']:,} rows in "
           f"{report['partitions']} partitions, cached (cache, count, noop write); each copy cached the same way"),
           f"- medians of {c['rounds']} round-robin rounds (exceptAll and datacompy: {c['slow_rounds']}, "
           f"{c['big_slow_rounds']} from k = {c['big_k']:,}"
           + (f"; datacompy at most {c['datacompy_rounds']}" if c.get("datacompy_rounds") is not None else "")
           + f"); {c['warmup']} untimed warm-up round of the fast methods before the first k",
           (f"- 1-minute load average: {report['load_start'][0]} at the start, {report['load_end'][0]} at the end, "
           f"{min(loads) if loads else '?'}-{max(loads) if loads else '?'} over the timed runs (2 cores: above ~2 "
           "the JVM did not get both; the machine is shared)"), ""]
    if report["failures"]:
        out += ["## CORRECTNESS FAILURES", ""] + [f"- {f}" for f in report["failures"]] + [""]
    else:
        out += [("Every answer checked (dsha.diff against exceptAll and the construction, keyed diff and datacompy "
                "against the construction): **all correct**."), ""]
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
            ("| k | rows only left / right | distinct differing digests | method | sketch cells | cells used | "
            "cells used / distinct |"), "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for p in report["per_k"]:
        d = (p["facts"].get("dsha_diff") or [None])[0]
        if d:
            ratio = (d["cells_used"] / d["distinct_differences"]) if d["cells_used"] and d["distinct_differences"] \
                else None
            out.append(f"| {p['k']:,} | {d['only_left_count']:,} / {d['only_right_count']:,} | "
                       f"{d['distinct_differences']:,} | {d['method']} | {d['sketch_cells']:,} | "
                       f"{fmt(d['cells_used'], ',')} | {fmt(ratio)} |")
    for p in report["per_k"]:
        out += ["", (f"## k = {p['k']:,}: {p['composition']['modified']:,} modified, {p['composition']['deleted']:,} "
                    f"deleted, {p['composition']['inserted']:,} inserted ({p['right_rows']:,} rows on the right)"), "",
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
            ("- The copies: rows picked by the smallest `xxhash64(l_orderkey, l_linenumber)`; modified rows alternate "
            "`l_comment` + \" [changed]\" and `l_quantity` + 1; inserted rows are copies of picked rows under the "
            "key (l_orderkey, l_linenumber + 100) with \"inserted: \" before the comment. So without a key each "
            "modified row is one row only left and one only right: 3k/4 each way, 3k/2 distinct digests.")]
    out.append("")
    return "\n".join(out)


def write_report(report, stem):
    report["targets"] = [row for p in report["per_k"] for row in ratio_row(p["k"], p)]
    write_results(stem, render(report), report)
