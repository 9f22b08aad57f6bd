#!/usr/bin/env python3
"""dsha benchmark suite (see bench/README.md). Entry point: `dev/run bench [flags]`, which sets DSHA_JAR.

The parent process generates the data and starts one child Python process (with its own Spark JVM) per phase:

  suite     local[2]: every method on cached TPC-H lineitem, from Parquet uncached, and on the synthetic nested table
  parallel  local[1] then local[2] (two processes): scan, xxhash64 and dsha on cached lineitem
  scaling   local[2]: scan, xxhash64 and dsha on cached lineitem at several scale factors
  profile   (--profile) local[2] with Java Flight Recorder while dsha(*) runs repeatedly; top frames aggregated
  write     local[2]: dsha.write against df.write.parquet of lineitem (from its files, and cached)
  redigest  local[2]: a table of 1,000 files with a manifest: full hash against fingerprint_path (manifest up to
            date, one file changed)
  arrow     (only with --phases arrow) `dsha hash --engine arrow` against `--engine spark`, end to end, and the
            Arrow engine's rows/s in memory (bench/arrow_engine.py)
  check     (only with --phases check) `dsha check` unchanged on 2,000 and 100,000 rows of Parquet: a cold
            `--engine spark` process against `--engine auto` (the Arrow engine) (bench/check_engine.py)
  testing   (only with --phases testing) dsha.testing.assert_equal against pyspark's assertDataFrameEqual and
            chispa on equal and 3-row-different tables of 1M rows and lineitem (bench/testing_bench.py)
  jarfree   (only with --phases jarfree) dsha.fingerprint of lineitem through the jar against the jar-free path on
            Spark's own Connect server without the jar and on Sail, in the 4.1.4 environment (bench/jarfree.py)
  goals     (only with --phases goals) every row of issue 35's table in one session, as same-run ratios; with
            --baseline-jar, before and after alternating (bench/goals.py)

Within a session, methods run round-robin (one timed run of each method per round), so drifting machine load hits
every method alike; the reported figure is the median over rounds. The load average is recorded at every run.
"""
import argparse
import datetime as _dt
import json
import os
import sys

# bench/ is this script's folder, so its modules import by plain name (in the child processes too).
from common import DATA, RESULTS, ROOT, loadavg, sf_label, write_results
from data import NESTED_SEED, ensure_lineitem, files_dir, nested_dir
from methods import (LINEITEM_METHODS, NESTED_METHODS, REDIGEST_METHODS, WRITE_METHODS, choose, descriptions)
from report import (aggregate_jfr, anchor_table, evaluate_targets, method_table, parallel_table, render_markdown,
                    scaling_tables)
from runner import run_child, worker

# JIT compilation goes on for several rounds after the first; the scaling phase is short, so it can afford more.
SCALING_MIN_ROUNDS = 9
SCALING_MIN_WARMUP = 4
# The phases in the order they run; --phases picks some (profile runs only with --profile).
PHASES = ["suite", "parallel", "scaling", "write", "redigest", "profile", "arrow", "check", "goals", "testing",
          "jarfree"]
FILE_PHASES = {"write", "redigest"}


def parse_args():
    p = argparse.ArgumentParser(description="dsha benchmark suite (bench/README.md)")
    p.add_argument("--sf", type=float, default=None, help="TPC-H scale factor for the main suite (default 1)")
    p.add_argument("--quick", action="store_true",
                   help="quick run: SF 0.1, 100k nested rows, scaling at 0.05/0.1, slow methods once")
    p.add_argument("--rounds", type=int, default=None,
                   help="timed rounds per method (median reported; default 3; goals: 5, --quick 3)")
    p.add_argument("--slow-rounds", type=int, default=None,
                   help="timed rounds for slow methods (exceptAll, sha2/to_json, pandas UDF); default = --rounds")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed warm-up rounds of the fast methods before timing (default 1; 0 = none)")
    p.add_argument("--skip-slow", action="store_true", help="skip exceptAll, sha2(to_json) and the pandas UDF")
    p.add_argument("--skip", default="", help="comma-separated method names to skip (see README)")
    p.add_argument("--only", default="", help="comma-separated method names to run (main suite)")
    p.add_argument("--phases", default=None,
                   help="comma-separated phases to run (default all: suite,parallel,scaling,write,redigest; "
                        "profile with --profile), e.g. --phases write,redigest")
    p.add_argument("--files", type=int, default=None,
                   help="files of the re-digest phase's table (default 1,000; --quick: 200)")
    p.add_argument("--nested-rows", type=int, default=None, help="rows of the nested table (default 1,000,000)")
    p.add_argument("--no-nested", action="store_true")
    p.add_argument("--no-parallel", action="store_true", help="skip the local[1] vs local[2] comparison")
    p.add_argument("--no-scaling", action="store_true", help="skip the scaling table")
    p.add_argument("--scaling-sfs", default=None, help="comma-separated SFs for scaling (default 0.25,0.5,1)")
    p.add_argument("--no-suite", action="store_true", help="skip the main suite (e.g. only scaling/parallel)")
    p.add_argument("--profile", action="store_true", help="also record a JFR profile of dsha(*) and aggregate it")
    p.add_argument("--profile-seconds", type=float, default=40)
    p.add_argument("--profile-expr", default="dsha(*)")
    p.add_argument("--testing-cap", type=float, default=120,
                   help="the testing phase: seconds an anchor may take on one case before it is stopped (default 120)")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--parts", type=int, default=4, help="Parquet files per table (tpchgen-cli --parts)")
    p.add_argument("--out", default=None,
                   help="results file stem (default bench/results/results-sf<SF>; results-files-sf<SF> when only "
                        "the write and redigest phases run)")
    p.add_argument("--baseline-jar", default=None,
                   help="goals phase: also run this (older) jar, alternating with the current one (before/after)")
    p.add_argument("--alternations", type=int, default=None,
                   help="goals phase: children per jar, alternating (default 2; --quick: 1)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--worker-out", help=argparse.SUPPRESS)
    return p.parse_args()


def number(x):
    """A scale factor as given, but 1.0 as 1: it names files and stands in the report."""
    return int(x) if float(x).is_integer() else x


# Each run_<phase> starts the phase's child process (two for parallel), adds its sections to the report and returns
# the machine the child ran on.
def run_suite(report, base, args, lineitem, nested_rows, tmpdir):
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    spec = dict(base, phase="suite", master="local[2]", lineitem=lineitem,
                lineitem_methods=choose(LINEITEM_METHODS, skip, only, args.skip_slow),
                nested_methods=[] if args.no_nested else choose(NESTED_METHODS, skip, only, args.skip_slow),
                nested_rows=nested_rows, nested=nested_dir(nested_rows))
    out = run_child(spec, tmpdir)
    report["lineitem"] = dict(out["lineitem"])
    report["lineitem_table"] = method_table(out["lineitem"], descriptions(LINEITEM_METHODS))
    if "nested" in out:
        report["nested"] = out["nested"]
        report["nested_table"] = method_table(out["nested"], descriptions(NESTED_METHODS))
    return out["machine"]


def run_parallel(report, base, lineitem, tmpdir):
    outs = [run_child(dict(base, phase="parallel", master=m, lineitem=lineitem), tmpdir)
            for m in ("local[1]", "local[2]")]
    report["parallel"] = [{"master": o["master"], "partitions": o["lineitem"]["partitions"],
                           "results": o["lineitem"]["results"], "load_start": o["load_start"]} for o in outs]
    report["parallel_table"] = parallel_table(outs)
    return outs[0]["machine"]


def run_scaling(report, base, args, scaling_sfs, tmpdir):
    scales = [(s, ensure_lineitem(s, args.parts)) for s in scaling_sfs]
    spec = dict(base, phase="scaling", master="local[2]", scales=scales,
                rounds=max(args.rounds, SCALING_MIN_ROUNDS), warmup=max(args.warmup, SCALING_MIN_WARMUP))
    out = run_child(spec, tmpdir)
    report["scaling"] = out["scales"]
    report["scaling_rounds"] = spec["rounds"]
    report["scaling_fixed_s"], report["scaling_table"] = scaling_tables(out["scales"], scaling_sfs)
    return out["machine"]


def run_write(report, base, args, lineitem, tmpdir):
    only = {s.strip() for s in args.only.split(",") if s.strip()} & {m for m, _, _ in WRITE_METHODS}
    spec = dict(base, phase="write", master="local[2]", lineitem=lineitem, write_dir=os.path.join(tmpdir, "write"),
                write_methods=choose(WRITE_METHODS, set(), only, False))
    out = run_child(spec, tmpdir)
    report["write"] = out["write"]
    report["write_table"] = anchor_table(out["write"], descriptions(WRITE_METHODS))
    return out["machine"]


def run_redigest(report, base, args, sf, lineitem, tmpdir):
    files = args.files or (200 if args.quick else 1000)
    only = {s.strip() for s in args.only.split(",") if s.strip()} & {m for m, _, _ in REDIGEST_METHODS}
    spec = dict(base, phase="redigest", master="local[2]", lineitem=lineitem, files=files,
                files_table=files_dir(sf, files), redigest_methods=choose(REDIGEST_METHODS, set(), only, False))
    out = run_child(spec, tmpdir)
    report["redigest"] = out["redigest"]
    report["redigest_table"] = anchor_table(out["redigest"], descriptions(REDIGEST_METHODS))
    return out["machine"]


def run_profile(report, base, args, sf, lineitem, tmpdir):
    slug = "".join(ch if ch.isalnum() else "_" for ch in args.profile_expr).strip("_")
    jfr_file = os.path.join(RESULTS, f"profile-sf{sf_label(sf)}-{slug}.jfr")
    opts = (f"-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints "
            f"-XX:StartFlightRecording=filename={jfr_file},settings=profile,dumponexit=true")
    out = run_child(dict(base, phase="profile", master="local[2]", lineitem=lineitem, extra_java_options=opts,
                         profile_seconds=args.profile_seconds, profile_expr=args.profile_expr), tmpdir)
    prof = aggregate_jfr(jfr_file)
    prof.update({"jfr": os.path.relpath(jfr_file, ROOT), "runs": out["profile_runs"], "expr": args.profile_expr})
    report["profile"] = prof
    return out["machine"]


def run_jarfree(sf, rounds, out):
    """bench/jarfree.py in the environment that has pysail (Sail) and a pyspark whose Connect server runs without the
    jar (dev/python-env 4.1.4), with this checkout's package first on its path."""
    import subprocess

    venv = subprocess.run([os.path.join(ROOT, "dev", "python-env"), "4.1.4"], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout.strip().splitlines()[-1]
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}
    command = [os.path.join(venv, "bin", "python"), os.path.join(ROOT, "bench", "jarfree.py"), "--sf", str(sf),
               "--rounds", str(rounds)] + (["--out", out] if out else [])
    subprocess.run(command, env=env, check=True, cwd=ROOT)


def main():
    args = parse_args()
    if args.rounds is None and (args.phases or "").strip() != "goals":
        args.rounds = 3
    if args.worker:
        with open(args.worker) as f:
            spec = json.load(f)
        out = worker(spec)
        with open(args.worker_out, "w") as f:
            json.dump(out, f)
        return

    sf = number(args.sf if args.sf is not None else (0.1 if args.quick else 1.0))
    nested_rows = args.nested_rows or (100_000 if args.quick else 1_000_000)
    slow_rounds = args.slow_rounds if args.slow_rounds is not None else (1 if args.quick else args.rounds)
    scaling_sfs = ([float(x) for x in args.scaling_sfs.split(",")] if args.scaling_sfs
                   else ([0.05, 0.1] if args.quick else [0.25, 0.5, 1.0]))
    scaling_sfs = [number(x) for x in scaling_sfs]

    started = _dt.datetime.now().isoformat(timespec="seconds")
    base = {"rounds": args.rounds, "slow_rounds": slow_rounds, "warmup": args.warmup,
            "driver_memory": args.driver_memory}
    report = {"command": "dev/run bench " + " ".join(sys.argv[1:]), "started": started,
              "config": dict(base, sf=sf, master="local[2]", nested_rows=nested_rows, scaling_sfs=scaling_sfs,
                             nested_seed=NESTED_SEED),
              "load_start": loadavg(), "descriptions": {}}
    os.makedirs(RESULTS, exist_ok=True)
    tmpdir = os.path.join(DATA, "tmp")
    os.makedirs(tmpdir, exist_ok=True)

    phases = set(PHASES) - {"profile", "arrow", "check", "goals", "testing", "jarfree"} if args.phases is None else {
        p.strip() for p in args.phases.split(",")}
    unknown = phases - set(PHASES)
    if unknown:
        raise SystemExit(f"unknown phases {sorted(unknown)} (phases: {', '.join(PHASES)})")
    if "arrow" in phases:
        if phases != {"arrow"}:
            raise SystemExit("--phases arrow runs on its own (it writes results-arrow-sf<SF>)")
        import arrow_engine

        arrow_engine.main(sf, ensure_lineitem(sf, args.parts), args.rounds, tmpdir, args.out)
        return
    if "check" in phases:
        if phases != {"check"}:
            raise SystemExit("--phases check runs on its own (it writes results-check-sf<SF>)")
        import check_engine

        check_engine.main(sf, ensure_lineitem(sf, args.parts), args.rounds, tmpdir, args.out)
        return
    if "testing" in phases:
        if phases != {"testing"}:
            raise SystemExit("--phases testing runs on its own (it writes results-testing-sf<SF>)")
        import testing_bench

        testing_bench.main(sf, ensure_lineitem(sf, args.parts), args.testing_cap, tmpdir, args.out,
                           args.driver_memory)
        return
    if "jarfree" in phases:
        if phases != {"jarfree"}:
            raise SystemExit("--phases jarfree runs on its own (it writes results-jarfree-sf<SF>)")
        run_jarfree(sf, args.rounds, args.out)
        return
    if "goals" in phases:
        if phases != {"goals"}:
            raise SystemExit("--phases goals runs on its own (it writes results-goals-sf<SF>)")
        import goals

        # Issue 35's table is about SF 1 (and 1.5M-row diff sides): --quick keeps the data, runs fewer rounds.
        sf = number(args.sf if args.sf is not None else 1.0)
        base["rounds"] = args.rounds if args.rounds is not None else 3 if args.quick else 5
        base["slow_rounds"] = args.slow_rounds if args.slow_rounds is not None else 1 if args.quick else 3
        args.alternations = args.alternations or (1 if args.quick else 2)
        report["config"].update(base, sf=sf)
        goals.main(report, base, args, sf, ensure_lineitem(sf, args.parts), tmpdir)
        return
    phases -= {p for p, off in (("suite", args.no_suite), ("parallel", args.no_parallel),
                                ("scaling", args.no_scaling)) if off}
    if args.profile:
        phases.add("profile")
    report["phases"] = [p for p in PHASES if p in phases]

    lineitem = ensure_lineitem(sf, args.parts)
    machines = []  # each phase's machine_info; the report keeps the first
    if "suite" in phases:
        machines.append(run_suite(report, base, args, lineitem, nested_rows, tmpdir))
    if "parallel" in phases:
        machines.append(run_parallel(report, base, lineitem, tmpdir))
    if "scaling" in phases:
        machines.append(run_scaling(report, base, args, scaling_sfs, tmpdir))
    if "write" in phases:
        machines.append(run_write(report, base, args, lineitem, tmpdir))
    if "redigest" in phases:
        machines.append(run_redigest(report, base, args, sf, lineitem, tmpdir))
    if "profile" in phases:
        machines.append(run_profile(report, base, args, sf, lineitem, tmpdir))

    report["machine"] = machines[0] if machines else {}
    report["load_end"] = loadavg()
    report["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
    report["targets"] = evaluate_targets(report)
    md = render_markdown(report)
    kind = "results-files" if phases and phases <= FILE_PHASES else "results"
    stem = args.out or os.path.join(RESULTS, f"{kind}-sf{sf_label(sf)}")
    write_results(stem, md, report)


if __name__ == "__main__":
    main()
