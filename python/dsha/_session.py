"""Getting dsha's SQL functions into a Spark session: the bundled jar, the extension, and clear errors."""
from __future__ import annotations

import glob
import os
import weakref
from typing import Any

EXTENSION_CLASS = "io.dsha.registration.DshaExtensions"
FUNCTIONS = ("logical_hash", "dsha", "dsha_fingerprint")

_HOW_TO = (
    "Start the session with the dsha jar and extension: in Python, "
    "`dsha.configure(SparkSession.builder...).getOrCreate()`; with spark-submit/spark-sql, "
    "`--jars {jar} --conf spark.sql.extensions=" + EXTENSION_CLASS + "` (a Spark Connect server needs both too). "
    "For a classic session that already has the jar on its classpath, `dsha.register(spark)`. "
    "Note: Spark only logs a warning when the extension class cannot be loaded."
)


class DshaNotLoadedError(RuntimeError):
    """The session has no dsha functions: the jar or the spark.sql.extensions setting is missing."""


def jar_path() -> str:
    """The dsha jar: $DSHA_JAR if set, else the jar bundled in this package."""
    override = os.environ.get("DSHA_JAR")
    if override:
        if not os.path.isfile(override):
            raise FileNotFoundError(f"DSHA_JAR points to {override!r}, which is not a file")
        return os.path.abspath(override)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")
    jars = sorted(glob.glob(os.path.join(here, "dsha-*.jar")))
    if not jars:
        raise FileNotFoundError(
            f"no dsha jar in {here}: this installation of the dsha package is incomplete "
            "(build it with `dev/run build`, or set DSHA_JAR)")
    return jars[-1]


def _append(existing: str | None, item: str) -> str:
    parts = [p for p in (existing or "").split(",") if p.strip()]
    if item not in parts:
        parts.append(item)
    return ",".join(parts)


def configure(builder: Any) -> Any:
    """Adds the bundled jar and the dsha extension to a ``SparkSession.Builder`` and returns the builder.

    Existing ``spark.jars`` and ``spark.sql.extensions`` values are kept. Works for ``.master(...)`` builders and
    for ``.remote("local[...]")`` builders (the in-process Connect server takes the builder's settings); a remote
    Connect server must itself be started with the jar and the extension.

    >>> spark = dsha.configure(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    options = getattr(builder, "_options", {})
    builder.config("spark.jars", _append(options.get("spark.jars"), jar_path()))
    builder.config("spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION_CLASS))
    return builder


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def register(spark: Any) -> None:
    """Registers dsha's SQL functions into a running classic session whose JVM already has the jar.

    Spark Connect sessions, and sessions started without the jar on the driver's classpath, must be started with
    :func:`configure` instead.
    """
    if _is_connect(spark):
        raise DshaNotLoadedError("dsha.register() needs a classic session; for Spark Connect, " + _HOW_TO.format(
            jar=jar_path()))
    jvm = spark._jvm  # noqa: SLF001 (py4j gateway of a classic session)
    try:
        jvm.io.dsha.registration.DshaFunctions.register(spark._jsparkSession)  # noqa: SLF001
    except Exception as e:  # py4j reports a missing class as a generic error
        raise DshaNotLoadedError(
            "the dsha jar is not on this session's classpath, so its functions cannot be registered. "
            + _HOW_TO.format(jar=jar_path())) from e
    _loaded.pop(id(spark), None)


_loaded: dict[int, bool] = {}


def ensure_loaded(spark: Any) -> None:
    """Raises :class:`DshaNotLoadedError` with set-up instructions when the session lacks the dsha functions."""
    key = id(spark)
    if _loaded.get(key):
        return
    try:
        present = all(spark.catalog.functionExists(f) for f in FUNCTIONS)
    except Exception:  # an older or restricted catalog API: let the query itself fail
        return
    if not present:
        try:
            where = jar_path()
        except FileNotFoundError:
            where = "dsha-<version>.jar"
        raise DshaNotLoadedError("dsha's SQL functions are not loaded in this Spark session. " + _HOW_TO.format(
            jar=where))
    _loaded[key] = True
    try:
        weakref.finalize(spark, _loaded.pop, key, None)
    except TypeError:
        pass
