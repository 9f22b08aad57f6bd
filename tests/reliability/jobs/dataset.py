"""The generated test table shared by the in-process tests and the spark-submit jobs: deterministic, a little of
every common type (nested too), nulls, and no dependence on partitioning."""

MIXED_COLUMNS = [
    "id",
    "CAST(id % 97 AS INT) AS i",
    "CAST(id AS DOUBLE) * 1.5 AS d",
    "CASE WHEN id % 11 = 0 THEN NULL ELSE concat('s', CAST(id % 1000 AS STRING)) END AS s",
    "CAST(id AS DECIMAL(20, 3)) / 8 AS dec",
    "date_add(DATE'2000-01-01', CAST(id % 5000 AS INT)) AS dt",
    "timestamp_micros(id * 1000003) AS ts",
    "named_struct('x', id % 7, 'y', array(id, id + 1, NULL)) AS st",
    "map(CAST(id % 10 AS STRING), id, 'k', -id) AS m",
    "id % 3 = 0 AS b",
]


# The columns of MIXED_COLUMNS that dsha's row-bytes step reads straight from the row (no struct, map, wide decimal).
FLAT_COLUMNS = ["id", "i", "d", "s", "dt", "ts", "b"]


def mixed(spark, rows, partitions):
    return spark.range(0, rows, 1, partitions).selectExpr(*MIXED_COLUMNS)
