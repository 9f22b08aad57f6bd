"""A spark-submit job: builds the generated table, optionally injects faults, prints DSHA_DIGEST=... and DSHA_ROWS=...

    spark-submit --jars dsha.jar --conf spark.sql.extensions=io.dsha.registration.DshaExtensions digest_job.py \
        [--rows N] [--partitions P] [--repartition Q] [--fail-first-attempt] [--slow-first-attempt PART:SECONDS]
        [--sleep-per-task SECONDS] [--sleep-at-row N] [--marker-dir DIR]
        [--write PATH [--mode MODE] [--partition-by COL]] [--also-flat]

With --write the table is written with dsha.write (the dsha package of this source tree) and the digest printed is
the one dsha.write returned.
"""
import argparse
import os
import sys
import time

from pyspark import TaskContext
from pyspark.sql import SparkSession

from dataset import FLAT_COLUMNS, mixed

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=100_000)
p.add_argument("--partitions", type=int, default=8)
p.add_argument("--repartition", type=int, default=0, help="shuffle into this many partitions before hashing")
p.add_argument("--flat", action="store_true", help="only the flat columns (so dsha's row-bytes step can apply)")
p.add_argument("--also-flat", action="store_true",
               help="also the flat columns' digest, after the same shuffle (DSHA_FLAT_*): one job for both")
p.add_argument("--fail-first-attempt", action="store_true",
               help="every task's first attempt fails after emitting all its rows")
p.add_argument("--slow-first-attempt", default="", help="PART:SECONDS - the first attempt of that task sleeps")
p.add_argument("--sleep-per-task", type=float, default=0.0)
p.add_argument("--sleep-at-row", type=int, default=0,
               help="the sleeps happen before this row of the partition (-1: after its last row)")
p.add_argument("--marker-dir", default="", help="each task attempt creates a file here when it starts")
p.add_argument("--write", default="", help="write the table here with dsha.write instead of digesting it")
p.add_argument("--mode", default="errorifexists", help="dsha.write's mode")
p.add_argument("--partition-by", default="", help="dsha.write's partition column")
a = p.parse_args()

spark = SparkSession.builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = mixed(spark, a.rows, a.partitions)
if a.flat:
    df = df.select(*FLAT_COLUMNS)

if a.fail_first_attempt or a.slow_first_attempt or a.sleep_per_task or a.marker_dir:
    slow_part, slow_secs = (int(x) if i == 0 else float(x) for i, x in enumerate(a.slow_first_attempt.split(":"))) \
        if a.slow_first_attempt else (-1, 0.0)

    def faulty(rows):
        tc = TaskContext.get()
        if a.marker_dir:
            name = f"{tc.stageId()}-{tc.partitionId()}-{tc.attemptNumber()}-{os.getpid()}"
            open(os.path.join(a.marker_dir, name), "w").close()

        def sleep():
            if a.sleep_per_task:
                time.sleep(a.sleep_per_task)
            if tc.partitionId() == slow_part and tc.attemptNumber() == 0:
                time.sleep(slow_secs)

        for n, row in enumerate(rows):
            if n == a.sleep_at_row:
                sleep()
            yield row
        if a.sleep_at_row < 0:
            sleep()
        if a.fail_first_attempt and tc.attemptNumber() == 0:
            raise RuntimeError(f"injected failure: partition {tc.partitionId()} attempt 0, after all rows")

    df = spark.createDataFrame(df.rdd.mapPartitions(faulty), df.schema)

if a.repartition:
    df = df.repartition(a.repartition)
if a.write:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
    import dsha

    f = dsha.write(df, a.write, mode=a.mode, partition_by=a.partition_by or None)
    print(f"DSHA_DIGEST={f.digest}")
    print(f"DSHA_ROWS={f.rows}")
    spark.stop()
    sys.exit(0)


def report(frame, prefix):
    frame.createOrReplaceTempView("t")
    q = spark.sql("SELECT dsha_fingerprint(*) AS f FROM t")
    f = q.collect()[0].f
    print(f"{prefix}_DIGEST={f.digest}")
    print(f"{prefix}_ROWS={f.rows}")
    print(f"{prefix}_ROW_BYTES_STEP={'PartialDsha' in q._jdf.queryExecution().executedPlan().toString()}")


report(df, "DSHA")
if a.also_flat:
    report(df.select(*FLAT_COLUMNS), "DSHA_FLAT")
spark.stop()
