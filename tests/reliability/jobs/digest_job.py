"""A spark-submit job: builds the generated table, optionally injects faults, prints DSHA_DIGEST=... and DSHA_ROWS=...

    spark-submit --jars dsha.jar --conf spark.sql.extensions=io.dsha.registration.DshaExtensions digest_job.py \
        [--rows N] [--partitions P] [--repartition Q] [--fail-first-attempt] [--slow-first-attempt PART:SECONDS]
        [--sleep-per-task SECONDS] [--marker-dir DIR]
"""
import argparse
import os
import time

from pyspark import TaskContext
from pyspark.sql import SparkSession

from dataset import FLAT_COLUMNS, mixed

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, default=100_000)
p.add_argument("--partitions", type=int, default=8)
p.add_argument("--repartition", type=int, default=0, help="shuffle into this many partitions before hashing")
p.add_argument("--flat", action="store_true", help="only the flat columns (so dsha's row-bytes step can apply)")
p.add_argument("--fail-first-attempt", action="store_true",
               help="every task's first attempt fails after emitting all its rows")
p.add_argument("--slow-first-attempt", default="", help="PART:SECONDS - the first attempt of that task sleeps")
p.add_argument("--sleep-per-task", type=float, default=0.0)
p.add_argument("--marker-dir", default="", help="each task attempt creates a file here when it starts")
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
        if a.sleep_per_task:
            time.sleep(a.sleep_per_task)
        if tc.partitionId() == slow_part and tc.attemptNumber() == 0:
            time.sleep(slow_secs)
        yield from rows
        if a.fail_first_attempt and tc.attemptNumber() == 0:
            raise RuntimeError(f"injected failure: partition {tc.partitionId()} attempt 0, after all rows")

    df = spark.createDataFrame(df.rdd.mapPartitions(faulty), df.schema)

if a.repartition:
    df = df.repartition(a.repartition)
df.createOrReplaceTempView("t")
q = spark.sql("SELECT dsha_fingerprint(*) AS f FROM t")
f = q.collect()[0].f
print(f"DSHA_DIGEST={f.digest}")
print(f"DSHA_ROWS={f.rows}")
print(f"DSHA_ROW_BYTES_STEP={'PartialDsha' in q._jdf.queryExecution().executedPlan().toString()}")
spark.stop()
