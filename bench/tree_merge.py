"""A sketch of a table of many partitions, merged flat (every partial to one task, as before issue #35 item 6) and as a
tree (python/dsha/spark/tree.py), on one machine: per-task input bytes and time.

    DSHA_JAR=jvm/target/dsha-spark4_2.13-0.1.0.jar PYTHONPATH=python:bench \\
        .venv/spark-4.3.0/bin/python bench/tree_merge.py [--parts 200,2000,20000] [--cells 3072] [--rows 2]

For each partition count N: a table of N partitions of `--rows` rows each (spark.range; the rows hardly matter, a
sketch's bytes are its cells: 48 bytes a cell), sketched with `dsha_sketch(*)` at `--cells` cells (shuffles
uncompressed: a sketch of few rows compresses to nothing, one of a real partition hardly), once flat and once
as a tree (both forced, whatever the default threshold says), in a job group. From Spark's REST API (the status
store): each stage's task count and the largest shuffle read of one of its tasks (the bytes a task receives), summed
over the job's stages for the total. The two sketches must be the same bytes. A line per run, and a Markdown table.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def session(driver_memory):
    import dsha
    from pyspark.sql import SparkSession

    b = (dsha.configure(SparkSession.builder.master("local[2]").appName("dsha-tree-bench"))
         .config("spark.driver.memory", driver_memory)
         .config("spark.ui.enabled", "true").config("spark.ui.port", "0")
         .config("spark.ui.showConsoleProgress", "false")
         # the sketches' own bytes: a partition of real data fills its cells, which then hardly compress
         .config("spark.shuffle.compress", "false")
         .config("spark.ui.retainedTasks", "200000").config("spark.ui.retainedStages", "10000"))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rest(spark, path):
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def stages_of(spark, group):
    """(stage id, tasks, largest shuffle read of a task, total shuffle read, longest task's run time in seconds) of
    the group's completed stages."""
    tracker = spark.sparkContext.statusTracker()
    ids = sorted({s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds})
    out = []
    for sid in ids:
        for _ in range(100):  # the status store is filled by the listener bus, a moment after the job
            info = rest(spark, f"stages/{sid}")
            if info and info[0].get("status") in ("COMPLETE", "SKIPPED"):
                break
            time.sleep(0.1)
        if info[0]["status"] == "SKIPPED":
            continue
        summary = rest(spark, f"stages/{sid}/{info[0]['attemptId']}/taskSummary?quantiles=1.0")
        read = summary.get("shuffleReadMetrics", {}).get("readBytes", [0])[0]
        longest = summary.get("executorRunTime", [0])[0] / 1000
        out.append((sid, info[0]["numTasks"], int(read), int(info[0].get("shuffleReadBytes", 0)), longest))
    return out


def run(spark, df, parts, tree_on, fan_in):
    from dsha.spark import tree

    tree.TREE_BYTES = 0 if tree_on else 1 << 62
    group = f"tree-{parts}-{tree_on}-{time.time()}"
    spark.sparkContext.setJobGroup(group, group)
    t = time.perf_counter()
    with tree.shuffle_for(spark, parts, 1, fan_in):
        s = bytes(tree.merged(df, "dsha_sketch(*)", "dsha_sketch_merge", parts, 1, fan_in).first()["s"])
    seconds = time.perf_counter() - t
    return s, seconds, stages_of(spark, group)


def mib(n):
    return f"{n / 2**20:,.1f} MiB"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="200,2000,20000")
    p.add_argument("--cells", type=int, default=3072)
    p.add_argument("--rows", type=int, default=2)
    p.add_argument("--fan-in", type=int, default=64)
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--out", default=None, help="also write the table (Markdown) to this file")
    args = p.parse_args()
    spark = session(args.driver_memory)
    spark.conf.set("spark.dsha.sketch.cells", str(args.cells))
    lines = [f"cells={args.cells} ({mib(48 * args.cells)} a sketch), {args.rows} rows a partition, fan-in "
             f"{args.fan_in}, local[2], load average at start {os.getloadavg()[0]:.1f}", "",
             "| partitions | merge | stages (tasks) | most one task receives | all shuffle reads | longest merge task "
             "| time |", "| ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for parts in [int(x) for x in args.parts.split(",")]:
        df = spark.range(0, parts * args.rows, 1, parts)
        results = {}
        for tree_on in (False, True):
            s, seconds, stages = run(spark, df, parts, tree_on, args.fan_in)
            results[tree_on] = s
            name = "tree" if tree_on else "flat"
            most = max((r for _, _, r, _, _ in stages), default=0)
            merging = max((t for _, _, r, _, t in stages if r > 0), default=0)  # the stages that read partials
            line = (f"| {parts:,} | {name} | {' + '.join(str(n) for _, n, _, _, _ in stages)} | {mib(most)} | "
                    f"{mib(sum(t for _, _, _, t, _ in stages))} | {merging:.1f} s | {seconds:.1f} s |")
            print(line, flush=True)
            lines.append(line)
        assert results[False] == results[True], f"the tree's sketch differs from the flat one at {parts} partitions"
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
