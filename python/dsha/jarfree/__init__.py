"""dsha without its jar: the digests of a DataFrame computed by Python on the executors (``mapInArrow``) with the
Arrow engine, for sessions whose server cannot load the jar (Spark Connect endpoints, Databricks serverless, Sail).

The same bytes as the jar (SPEC.md Appendix A.2): each partition's rows arrive as Arrow batches, the Arrow engine
hashes them into a state (SPEC.md §11), the driver merges the states. The canonical schema comes from the
DataFrame's Spark schema; a type Spark's Arrow transfer cannot carry exactly is refused with its column's name.

Modules: ``engine`` (which path a session takes), ``schema`` (types and canonical schema), ``digests`` (the jobs),
``sql`` (SQL functions without the jar: :func:`register_sql`).
Nothing is imported here: pyarrow and numpy load only when the jar-free path runs.
"""
from typing import Any, Dict

__all__ = ["register_sql"]


def register_sql(spark: Any, prefix: str = "dsha_py") -> Dict[str, str]:
    """Registers dsha's row hash for the session's SQL without the jar (Spark 4.1+ Arrow UDFs):
    ``dsha_py_logical_hash(struct(a, b))`` is the jar's ``logical_hash(a, b)``, and ``dsha_py_schema_digest``
    finishes the table digest of :func:`dsha.jarfree.sql.digest_sql`; see :func:`dsha.jarfree.sql.register`."""
    from dsha.jarfree.sql import register

    return register(spark, prefix)
