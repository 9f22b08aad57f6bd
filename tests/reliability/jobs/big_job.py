"""spark-submit job: dsha_fingerprint over N generated rows (several types); prints DSHA_DIGEST, DSHA_ROWS, the
driver's maximum heap (to prove spark.driver.memory took effect) and the time."""
import sys
import time

from pyspark.sql import SparkSession

rows = int(sys.argv[1])
spark = SparkSession.builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory() // (1 << 20)
spark.range(rows).selectExpr(
    "id", "CAST(id % 1000 AS INT) AS k", "concat('row-', CAST(id AS STRING)) AS s", "CAST(id AS DOUBLE) / 3 AS d",
    "CAST(id AS DECIMAL(20, 2)) AS amount").createOrReplaceTempView("big")
started = time.time()
f = spark.sql("SELECT dsha_fingerprint(*) AS f FROM big").first().f
print(f"DSHA_DIGEST={f.digest}")
print(f"DSHA_ROWS={f.rows}")
print(f"DSHA_HEAP_MAX_MB={heap}")
print(f"DSHA_SECONDS={time.time() - started:.1f}")
spark.stop()
