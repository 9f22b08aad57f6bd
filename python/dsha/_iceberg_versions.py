"""Which Apache Iceberg release dsha tests with on each Spark line (the one place this table is kept).

Iceberg ships one Spark runtime jar per Spark minor line and Scala version,
``org.apache.iceberg:iceberg-spark-runtime-<spark line>_<scala>:<version>`` on Maven Central, loaded with
``spark.jars.packages`` and ``spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions``.
There is no runtime for Spark 4.2 or 4.3 yet (Iceberg 1.12.0 is the newest, for Spark 3.5, 4.0 and 4.1).
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional

EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


class IcebergRelease(NamedTuple):
    version: str  # the Maven artifact's version
    artifact: str  # the Maven artifact for spark.jars.packages (group org.apache.iceberg)

    @property
    def maven_coordinate(self) -> str:
        return f"org.apache.iceberg:{self.artifact}:{self.version}"


# Spark minor line -> the Iceberg runtime for it. pyspark tested: 3.5.9, 4.0.5, 4.1.4.
ICEBERG_FOR_SPARK: Dict[str, IcebergRelease] = {
    "3.5": IcebergRelease("1.10.0", "iceberg-spark-runtime-3.5_2.12"),
    "4.0": IcebergRelease("1.10.0", "iceberg-spark-runtime-4.0_2.13"),
    "4.1": IcebergRelease("1.11.0", "iceberg-spark-runtime-4.1_2.13"),
}


def iceberg_for_spark(spark_version: str) -> Optional[IcebergRelease]:
    """The Iceberg runtime for a Spark version ("4.0.5" -> 1.10.0), or None when there is none (Spark 4.2, 4.3)."""
    line = ".".join(spark_version.split(".")[:2])
    return ICEBERG_FOR_SPARK.get(line)
