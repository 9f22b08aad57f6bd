"""Getting dsha's SQL functions into a Spark session: the bundled jar, the extension, and clear errors."""
from __future__ import annotations

import glob
import os
import re
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple

from dsha.dependencies import lazy_module, pyspark, pyspark_sql
from dsha.errors import DshaNotLoadedError, TableNotFoundError, UnsupportedSparkError
from dsha.spark.catalog_names import active_session, table_not_found

if TYPE_CHECKING:
    from types import TracebackType

    import py4j.java_gateway as py4j_gateway

    from dsha.spark.types import SparkSessionLike
else:
    py4j_gateway = lazy_module("py4j.java_gateway")

__all__ = ["EXTENSION_CLASS", "FUNCTIONS", "DshaNotLoadedError", "UnsupportedSparkError", "bundled_jars",
           "check_active_session", "configure", "ensure_loaded", "has_functions", "is_connect", "is_not_loaded_error",
           "jar_path", "register", "session_settings", "spark_line", "spark_runtime", "translate_errors"]

EXTENSION_CLASS = "io.dsha.registration.DshaExtensions"
FUNCTIONS = ("logical_hash", "dsha", "dsha_fingerprint", "dsha_state", "dsha_merge", "dsha_final",
             "dsha_final_fingerprint", "dsha_keyed", "dsha_keyed_fingerprint", "dsha_keyed_state", "dsha_secure",
             "dsha_secure_fingerprint", "dsha_secure_state", "dsha_secure_v2", "dsha_secure_v2_fingerprint",
             "dsha_secure_v2_state", "dsha_sketch", "dsha_sketch_diff", "dsha_sketch_merge",
             "logical_hash_in", "logical_filter_word_in")

_HOW_TO = (
    "Start the session with the dsha jar and extension: in Python, "
    "`dsha.configure(SparkSession.builder...).getOrCreate()`; with spark-submit/spark-sql, "
    "`--jars {jar} --conf spark.sql.extensions=" + EXTENSION_CLASS + "` (a Spark Connect server needs both too). "
    "For a classic session that already has the jar on its classpath, `dsha.register(spark)`. "
    "Note: Spark only logs a warning when the extension class cannot be loaded."
)


JAR_NAME = re.compile(r"^dsha-spark(?P<line>\d+(?:\.\d+)?)_(?P<scala>2\.1[23])-(?P<version>[^-]+(?:-[^-]+)*)\.jar$")
_SPARK_CORE = re.compile(r"^spark-core_(?P<scala>2\.1[23])-(?P<version>\d+\.\d+\.\d+\S*)\.jar$")


_JARS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jars")


def bundled_jars() -> Dict[Tuple[str, str], str]:
    """The jars this package carries, by (Spark line, Scala version), e.g. ``("3.5", "2.12")`` or ``("4", "2.13")``."""
    jars = {}
    for path in sorted(glob.glob(os.path.join(_JARS, "dsha-spark*.jar"))):
        m = JAR_NAME.match(os.path.basename(path))
        if m:
            jars[(m.group("line"), m.group("scala"))] = path
    return jars


def spark_runtime() -> Tuple[str, str]:
    """(Spark version, Scala version) of the Spark that PySpark starts: read from the spark-core jar in $SPARK_HOME/jars
    or pyspark's own jars/ folder (pyspark 3.5 ships Scala 2.12 jars, 4.x Scala 2.13); without jars (a Spark Connect
    client only), pyspark's version and that line's Scala version."""
    homes = [os.environ.get("SPARK_HOME"), os.path.dirname(os.path.abspath(pyspark.__file__))]
    for home in filter(None, homes):
        for name in sorted(os.listdir(os.path.join(home, "jars")) if os.path.isdir(os.path.join(home, "jars")) else []):
            m = _SPARK_CORE.match(name)
            if m:
                return m.group("version"), m.group("scala")
    version: str = pyspark.__version__
    return version, "2.12" if version.startswith("3.") else "2.13"


def spark_line(spark_version: str) -> str:
    """The dsha jar line serving a Spark version: "3.5" for 3.5.x, "4" for every 4.x (one jar, checked on each)."""
    parts = spark_version.split(".")
    return parts[0] if parts[0] != "3" else ".".join(parts[:2])


def _supported(jars: Dict[Tuple[str, str], str]) -> str:
    by_line: Dict[str, List[str]] = {}
    for line, scala in sorted(jars):
        by_line.setdefault(line, []).append(scala)
    return "; ".join(f"Spark {line if '.' in line else line + '.x'} (Scala {', '.join(s)})"
                     for line, s in by_line.items()) or "none"


def jar_path() -> str:
    """The dsha jar: $DSHA_JAR if set, else the bundled jar for the installed Spark line and Scala version."""
    override = os.environ.get("DSHA_JAR")
    if override:
        if not os.path.isfile(override):
            raise FileNotFoundError(f"DSHA_JAR points to {override!r}, which is not a file")
        return os.path.abspath(override)
    jars = bundled_jars()
    if not jars:
        raise FileNotFoundError(
            f"no dsha jar in {_JARS}: this installation of the dsha package is incomplete "
            "(build it with `dev/run build`, or set DSHA_JAR)")
    version, scala = spark_runtime()
    jar = jars.get((spark_line(version), scala))
    if jar is None:
        raise UnsupportedSparkError(
            f"this dsha package has no jar for Spark {version} with Scala {scala}; it supports {_supported(jars)}. "
            "Install a supported pyspark, or point DSHA_JAR to a dsha jar built for your Spark.")
    return jar


def _append(existing: str | None, item: str) -> str:
    parts = [p for p in (existing or "").split(",") if p.strip()]
    if item not in parts:
        parts.append(item)
    return ",".join(parts)


def configure(builder: Any) -> Any:  # a SparkSession.Builder (classic or Spark Connect)
    """Adds the bundled jar and the dsha extension to a ``SparkSession.Builder`` and returns the builder.

    Existing ``spark.jars`` and ``spark.sql.extensions`` values are kept. Works for ``.master(...)`` builders and
    for ``.remote("local[...]")`` builders (the in-process Connect server takes the builder's settings); a remote
    Connect server must itself be started with the jar and the extension.

    >>> spark = dsha.configure(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    options = getattr(builder, "_options", {})
    builder.config("spark.jars", _append(options.get("spark.jars"), jar_path()))
    builder.config("spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION_CLASS))
    if str(options.get("spark.remote") or os.environ.get("SPARK_REMOTE") or "").startswith("local"):
        warnings.filterwarnings("ignore", message=_SET_AT_START, category=UserWarning)
    return builder


# A local Spark Connect server (``.remote("local[...]")``) starts with the builder's settings; PySpark then sets them
# again as runtime settings, which the server refuses for static ones with a UserWarning per setting that reads like
# a failure ("Failed to set spark.jars ... [CANNOT_MODIFY_CONFIG]" on 4.x; 3.5.9 prints none, its error texts are
# matched too). The jar and the extension were taken at the start: those two warnings are ignored, any other kept.
_SET_AT_START = (r'.*?(Failed to set |Cannot modify the value of (the|a) (static )?(Spark )?config: "?)'
                 r'spark\.(jars|sql\.extensions)\b')


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no driver JVM to reach)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def register(spark: SparkSessionLike) -> None:
    """Registers dsha's SQL functions into a running classic session whose JVM already has the jar.

    Spark Connect sessions, and sessions started without the jar on the driver's classpath, must be started with
    :func:`configure` instead. Without the extension the session also lacks the analyzer rule that names a column
    argument as its table spells it (SPEC.md §2.1): ``dsha(A)`` over a column ``a`` then hashes a column ``A``.
    """
    if is_connect(spark):
        raise DshaNotLoadedError(
            "dsha.register() needs a classic session: a Spark Connect session gets dsha's functions from its server, "
            "which must be started with the jar and the extension (for a local server, "
            "`dsha.configure(SparkSession.builder.remote(\"local[*]\")).getOrCreate()`). "
            + _HOW_TO.format(jar=_jar_or_placeholder()))
    jvm: Any = spark._jvm  # type: ignore[union-attr]
    functions = jvm.io.dsha.registration.DshaFunctions
    if isinstance(functions, py4j_gateway.JavaPackage):  # py4j's answer for a class it cannot load
        raise DshaNotLoadedError(
            "the dsha jar is not on this session's classpath (io.dsha.registration.DshaFunctions cannot be loaded), "
            "so its functions cannot be registered. " + _HOW_TO.format(jar=_jar_or_placeholder()))
    functions.register(spark._jsparkSession)
    _loaded.discard(spark)


class _Loaded:
    """Sessions known to have the functions, by a key that outlives the Python wrapper: classic PySpark can hand out
    a new wrapper object for the same JVM session (``SparkSession.getActiveSession()`` does), and a new session must
    never inherit an old answer."""

    def __init__(self) -> None:
        self._keys: Set[Any] = set()

    @staticmethod
    def _key(spark: Any) -> Any:
        try:
            if is_connect(spark):
                return ("connect", spark.session_id, id(spark.client))
            return ("classic", spark._jsparkSession.sessionUUID())
        except Exception:
            return None

    def __contains__(self, spark: Any) -> bool:
        key = self._key(spark)
        return key is not None and key in self._keys

    def add(self, spark: Any) -> None:
        key = self._key(spark)
        if key is not None:
            self._keys.add(key)

    def discard(self, spark: Any) -> None:
        self._keys.discard(self._key(spark))


_loaded = _Loaded()


def _jar_or_placeholder() -> str:
    try:
        return jar_path()
    except FileNotFoundError:
        return "dsha-spark<line>_<scala>-<version>.jar"


def _not_loaded_message() -> str:
    return "dsha's SQL functions are not loaded in this Spark session. " + _HOW_TO.format(jar=_jar_or_placeholder())


def has_functions(spark: SparkSessionLike) -> Optional[bool]:
    """Whether the session has dsha's functions; None when its catalog cannot say (an older or restricted catalog
    API, a server without it). Asks the catalog until a positive answer, which is remembered for the session."""
    if spark in _loaded:
        return True
    try:
        present = all(spark.catalog.functionExists(f) for f in FUNCTIONS)
    except Exception:  # any failure of the catalog call means "cannot say"
        return None
    if present:
        _loaded.add(spark)
    return present


def ensure_loaded(spark: SparkSessionLike) -> None:
    """Raises :class:`DshaNotLoadedError` with set-up instructions when the session lacks the dsha functions.

    The check asks the catalog once per session (one round trip over Spark Connect) and remembers a positive answer;
    when the catalog cannot say, the query itself fails (see translate_errors)."""
    if has_functions(spark) is False:
        raise DshaNotLoadedError(_not_loaded_message())


def check_active_session() -> None:
    """Best effort, for the Column functions: if a session is active, it must have the dsha functions."""
    try:
        spark = pyspark_sql.SparkSession.getActiveSession()
    except Exception:
        return
    if spark is not None:
        ensure_loaded(spark)


def is_not_loaded_error(e: BaseException) -> bool:
    """Whether ``e`` is Spark's "unknown function" error for one of dsha's functions (or Sail's)."""
    text = str(e)
    if any(name in FUNCTIONS for name in re.findall(r"unknown function: (\w+)", text)):  # Sail (pysail 0.7)
        return True
    if "UNRESOLVED_ROUTINE" not in text and "Undefined function" not in text:
        return False
    return any(f"`{f}`" in text or f"'{f}'" in text or f" {f}." in text for f in FUNCTIONS)


class translate_errors:
    """Context manager: Spark's UNRESOLVED_ROUTINE for a dsha function becomes a :class:`DshaNotLoadedError`; a
    table that cannot be found (a Spark Connect ``spark.table(...)`` is read only by dsha's query) a
    :class:`TableNotFoundError` with the catalog's closest names."""

    def __enter__(self) -> translate_errors:
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if exc is None or isinstance(exc, (DshaNotLoadedError, TableNotFoundError)):
            return
        if is_not_loaded_error(exc):
            raise DshaNotLoadedError(_not_loaded_message()) from exc
        missing = table_not_found(active_session(), exc)
        if missing is not None:
            raise missing from exc


# Spark 4.2+ merges global aggregates of one source under a union (both sides of a diff when one is the other filtered)
# into one aggregate read through scalar subqueries (MergeSubplans), whose values then travel inside every task of the
# next stage: for sketches of megabytes, a task binary four times their size (18 MiB at 49,152 cells) and a diff up to
# 2.5 times slower. The rule's class in Spark 4.2, then 4.3; an unknown name in the setting is ignored.
SUBPLAN_MERGING = ("org.apache.spark.sql.catalyst.optimizer.MergeSubplans",
                   "org.apache.spark.sql.execution.planmerging.MergeSubplans")
EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"


def without_subplan_merging(spark: Any) -> Dict[str, str]:
    """The settings (for :func:`session_settings`) that keep Spark from merging large aggregates into scalar
    subqueries (:data:`SUBPLAN_MERGING`), the session's own excluded rules kept."""
    rules = [r.strip() for r in (spark.conf.get(EXCLUDED_RULES, "") or "").split(",") if r.strip()]
    return {EXCLUDED_RULES: ",".join(rules + [r for r in SUBPLAN_MERGING if r not in rules])}


@contextmanager
def session_settings(spark: Any, values: Dict[str, str]) -> Iterator[None]:
    """Runtime settings for the queries of a block (classic or Spark Connect; read when they are analysed), each
    restored after it: its previous value, or unset."""
    previous = {k: spark.conf.get(k, None) for k in values}
    for k, v in values.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
