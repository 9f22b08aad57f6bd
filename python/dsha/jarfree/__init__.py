"""dsha without its jar: the digests of a DataFrame computed by Python on the executors (``mapInArrow``) with the
Arrow engine, for sessions whose server cannot load the jar (Spark Connect endpoints, Databricks serverless, Sail).

The same bytes as the jar (SPEC.md Appendix A.2): each partition's rows arrive as Arrow batches, the Arrow engine
hashes them into a state (SPEC.md §11), the driver merges the states. The canonical schema comes from the
DataFrame's Spark schema; a type Spark's Arrow transfer cannot carry exactly is refused with its column's name.

Modules: ``engine`` (which path a session takes), ``schema`` (types and canonical schema), ``digests`` (the jobs).
Nothing is imported here: pyarrow and numpy load only when the jar-free path runs.
"""

__all__: list = []
