"""Which Delta Lake release dsha tests with on each Spark line (the one place this table is kept).

Each Delta release is built for one Spark minor line; from Delta 4.1 on, the Maven artifact names the line
(``io.delta:delta-spark_4.1_2.13``), before that only Scala (``io.delta:delta-spark_2.12`` for Spark 3.5,
``io.delta:delta-spark_2.13`` for Spark 4.0). ``pip_requirement`` is what to install from PyPI; ``no_deps`` marks a
release whose own pyspark pin excludes the pyspark dsha tests on that line (e.g. delta-spark 4.4.x says
``pyspark<=4.2.0``), to be installed with ``pip install --no-deps`` so that the pinned pyspark stays.
Spark 4.3 has no Delta release yet.
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional


class DeltaRelease(NamedTuple):
    version: str  # delta-spark on PyPI and the Maven artifact's version
    artifact: str  # the Maven artifact for spark.jars.packages (group io.delta)
    no_deps: bool  # install with pip --no-deps (its pyspark pin excludes the tested pyspark)

    @property
    def pip_requirement(self) -> str:
        return f"delta-spark=={self.version}"

    @property
    def maven_coordinate(self) -> str:
        return f"io.delta:{self.artifact}:{self.version}"


# Spark minor line -> the Delta release for it. pyspark tested: 3.5.9, 4.0.5, 4.1.4, 4.2.1, 4.3.0.
DELTA_FOR_SPARK: Dict[str, DeltaRelease] = {
    "3.5": DeltaRelease("3.3.2", "delta-spark_2.12", False),  # pyspark>=3.5.3,<3.6.0
    "4.0": DeltaRelease("4.0.1", "delta-spark_2.13", False),  # pyspark>=4.0.0; built for Spark 4.0
    "4.1": DeltaRelease("4.1.0", "delta-spark_4.1_2.13", False),  # pyspark>=4.0.1; artifact for Spark 4.1
    "4.2": DeltaRelease("4.4.0", "delta-spark_4.2_2.13", True),  # pins pyspark<=4.2.0: --no-deps for 4.2.1
}


def delta_for_spark(spark_version: str) -> Optional[DeltaRelease]:
    """The Delta release for a Spark version ("4.0.5" -> 4.0.1), or None when there is none (Spark 4.3)."""
    line = ".".join(spark_version.split(".")[:2])
    return DELTA_FOR_SPARK.get(line)
