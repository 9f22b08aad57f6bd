"""The Arrow engine against the Spark engine (issue 15): `dev/run bench --phases arrow [--sf 1] [--rounds 3]`.

Same run, round-robin (each round runs every measurement once, so load drift hits both engines alike; medians):

1. `dsha hash <lineitem> --engine arrow|spark --json` end to end, as users run it (process start, Python imports, for
   Spark the JVM and the session): wall time and the peak resident memory of the whole process tree (every process
   of the command's session, sampled from /proc every 20 ms). Target: arrow wall <= spark wall, arrow peak <= 1 GB.
2. The same on a 10,000-row Parquet file (lineitem's first 10,000 rows). Target: arrow <= 0.2x spark.
3. dsha.arrow in this process on lineitem in memory: the fixed-width columns only, and the string columns only:
   rows/s (wall) and rows per CPU-second (per core).

Both engines must print the same digest; the run stops if they do not.
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time

from common import RESULTS, log, loadavg, sf_label, write_results

FIXED = ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount",
         "l_tax", "l_shipdate", "l_commitdate", "l_receiptdate"]
STRINGS = ["l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode", "l_comment"]
SMALL_ROWS = 10_000
PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree_rss(sid):
    """Resident bytes of every process in session ``sid``."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:  # field 6 of stat: the session id (fields[0] is field 3, the state)
                total += int(fields[21]) * PAGE  # field 24: rss in pages
        except (OSError, IndexError, ValueError):
            continue
    return total


def run_measured(cmd):
    """(wall seconds, peak RSS bytes of the process tree, stdout) of a command in its own session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    started = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    peak = [0]

    def sample():
        while p.poll() is None:
            peak[0] = max(peak[0], _tree_rss(p.pid))
            time.sleep(0.02)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = p.communicate()
    wall = time.perf_counter() - started
    t.join()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err}")
    return wall, peak[0], out


def cli(path, engine):
    return [sys.executable, "-m", "dsha", "hash", path, "--engine", engine, "--json", "--quiet"]


def end_to_end(paths, rounds):
    """{(label, engine): [(wall, peak)]} and the digests, round-robin over every (label, engine)."""
    timings, digests = {}, {}
    for r in range(rounds):
        for label, path in paths.items():
            for engine in ("arrow", "spark"):
                wall, peak, out = run_measured(cli(path, engine))
                digest = json.loads(out)["digest"]
                digests.setdefault(label, set()).add(digest)
                timings.setdefault((label, engine), []).append((wall, peak))
                log(f"round {r + 1}: {label} {engine}: {wall:.2f} s, peak {peak / 2**20:.0f} MiB, load {loadavg()}")
    for label, found in digests.items():
        if len(found) != 1:
            raise SystemExit(f"the engines disagree on {label}: {sorted(found)}")
    return timings, {k: v.pop() for k, v in digests.items()}


def throughput(lineitem, rounds):
    import pyarrow.dataset as ds

    import dsha.arrow

    table = ds.dataset(lineitem, format="parquet").to_table()
    out = {}
    for name, cols in (("fixed-width (11 columns)", FIXED), ("strings (5 columns)", STRINGS)):
        part = table.select(cols)
        dsha.arrow.fingerprint(part.slice(0, 100_000))  # warm-up
        walls, cpus = [], []
        for _ in range(rounds):
            w0, c0 = time.perf_counter(), time.process_time()
            dsha.arrow.fingerprint(part)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
        out[name] = {"rows": part.num_rows, "bytes": part.nbytes, "wall": statistics.median(walls),
                     "cpu": statistics.median(cpus)}
        log(f"in memory, {name}: {part.num_rows / out[name]['wall']:,.0f} rows/s, "
            f"{part.num_rows / out[name]['cpu']:,.0f} rows per CPU-second")
    return out


def small_file(lineitem, tmpdir):
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    path = os.path.join(tmpdir, f"lineitem-{SMALL_ROWS}.parquet")
    if not os.path.exists(path):
        pq.write_table(ds.dataset(lineitem, format="parquet").head(SMALL_ROWS), path)
    return path


def main(sf, lineitem, rounds, tmpdir, out_stem=None):
    report = {"sf": sf, "rounds": rounds, "load_start": loadavg(), "cpus": os.cpu_count()}
    paths = {f"lineitem SF {sf}": lineitem, f"{SMALL_ROWS:,} rows": small_file(lineitem, tmpdir)}
    timings, digests = end_to_end(paths, rounds)
    report["throughput"] = throughput(lineitem, rounds)
    report["load_end"] = loadavg()
    lines = [f"# Arrow engine vs Spark engine (`dsha hash`, end to end), lineitem SF {sf}", "",
             f"{os.cpu_count()} cores; medians of {rounds} round-robin rounds; load {report['load_start']} → "
             f"{report['load_end']}.", "",
             "| input | arrow wall | spark wall | arrow / spark | arrow peak memory | spark peak memory | digest |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    report["end_to_end"] = {}
    for label in paths:
        a = [t for t in timings[(label, "arrow")]]
        s = [t for t in timings[(label, "spark")]]
        aw, sw = statistics.median(w for w, _ in a), statistics.median(w for w, _ in s)
        ap, sp = max(p for _, p in a), max(p for _, p in s)
        report["end_to_end"][label] = {"arrow_wall": aw, "spark_wall": sw, "arrow_peak": ap, "spark_peak": sp,
                                       "digest": digests[label], "all": {"arrow": a, "spark": s}}
        lines.append(f"| {label} | {aw:.2f} s | {sw:.2f} s | **{aw / sw:.2f}** | {ap / 2**20:.0f} MiB | "
                     f"{sp / 2**20:.0f} MiB | `{digests[label][:20]}…` |")
    lines += ["", "dsha.arrow in one process on lineitem in memory (batches on every core; rows per CPU-second is "
              "the rate of one core):", "",
              "| columns | rows | rows/s | rows per CPU-second |", "| --- | --- | --- | --- |"]
    for name, t in report["throughput"].items():
        lines.append(f"| {name} | {t['rows']:,} | {t['rows'] / t['wall']:,.0f} | {t['rows'] / t['cpu']:,.0f} |")
    md = "\n".join(lines) + "\n"
    stem = out_stem or os.path.join(RESULTS, f"results-arrow-sf{sf_label(sf)}")
    write_results(stem, md, report)
