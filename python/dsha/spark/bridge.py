"""The Py4J bridge to dsha's JVM side (``io.dsha.files.PythonApi``): classic sessions only."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, TypeVar

from dsha.dependencies import py4j_protocol
from dsha.spark.session import ensure_loaded, is_connect

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["java_errors", "java_map", "jvm_api"]

T = TypeVar("T")


def jvm_api(spark: SparkSessionLike, what: str) -> Any:
    """``io.dsha.files.PythonApi`` of a classic session with dsha loaded; ``what`` names the caller in the error
    a Spark Connect session gets."""
    if is_connect(spark):
        raise NotImplementedError(
            f"{what} needs a classic SparkSession: it runs dsha's file writer and listing in the driver JVM, which a "
            "Spark Connect client cannot reach. Use a classic session (SparkSession.builder.master(...)), or "
            "dsha.fingerprint(spark.read.load(path)) for a full digest.")
    ensure_loaded(spark)
    jvm: Any = spark.sparkContext._jvm
    return jvm.io.dsha.files.PythonApi


def java_errors(call: Callable[[], T]) -> T:
    """Runs a JVM call; dsha's IllegalArgumentException (a bad argument, named) becomes a ValueError. PySpark may
    already have converted it (``pyspark.errors.IllegalArgumentException``), or Py4J hands it over raw."""
    try:
        return call()
    except py4j_protocol.Py4JJavaError as e:
        java = e.java_exception
        if java.getClass().getName() == "java.lang.IllegalArgumentException":
            _raise_if_ours(java.getMessage() or "")
        raise
    except Exception as e:
        if type(e).__name__ == "IllegalArgumentException":
            _raise_if_ours(str(e).split("\n", 1)[0])
        raise


def _raise_if_ours(message: str) -> None:
    if message.startswith("dsha"):
        raise ValueError(message) from None


def java_map(spark: SparkSessionLike, options: Dict[str, Any]) -> Any:
    """``options`` as a ``java.util.HashMap`` of strings (booleans as Spark writes them: true/false)."""
    jvm: Any = spark.sparkContext._jvm
    m = jvm.java.util.HashMap()
    for k, v in options.items():
        m.put(str(k), str(v).lower() if isinstance(v, bool) else str(v))
    return m
