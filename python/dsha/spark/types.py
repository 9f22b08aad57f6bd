"""Type names for Spark objects, classic and Spark Connect alike, for annotations only: nothing is imported at run
time (``from __future__ import annotations`` keeps annotations unevaluated)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

__all__ = ["ColumnLike", "ColumnOrName", "DataFrameLike", "SparkSessionLike"]

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.connect.column import Column as ConnectColumn
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

# A DataFrame, Column or SparkSession of classic PySpark or of Spark Connect (in pyspark 3.5 the Connect classes
# are not subclasses of the classic ones; in 4.x they are).
DataFrameLike = Union["DataFrame", "ConnectDataFrame"]
ColumnLike = Union["Column", "ConnectColumn"]
SparkSessionLike = Union["SparkSession", "ConnectSparkSession"]
ColumnOrName = Union["Column", "ConnectColumn", str]
