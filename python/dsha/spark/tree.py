"""Aggregates of many partitions merged as a tree (as Spark's ``treeAggregate``), so that no task receives more than
a bounded number of partial results.

A global aggregate such as ``dsha_sketch(*)`` computes one partial per partition and sends them all to one task: a
sketch is 2.25 MiB at the default 49,152 cells, so 10,000 partitions send that task 22 GiB. Here the partials are
grouped first, by ``spark_partition_id() div FAN_IN`` (each group the partials of at most ``FAN_IN`` consecutive
partitions, merged in the task that the group's key is shuffled to), then the groups' results by the same rule,
level by level, until at most ``FAN_IN`` remain for the one global merge. The shuffle has a partition per group of
the first level (``spark.sql.shuffle.partitions`` raised for the query when it is smaller), so a task receives about
``FAN_IN`` partials wherever the partition count. Merging is associative and commutative (SPEC.md §11, §17.1), so
the result is the same bytes as the flat aggregate's; only where the partials travel changes. DataFrame operations
only: the same on classic Spark and Spark Connect."""

from __future__ import annotations

from typing import Any, List, Optional

from dsha.dependencies import F
from dsha.spark.session import is_connect, session_settings

__all__ = ["FAN_IN", "MOST_TASKS", "TREE_BYTES", "levels", "merged", "shuffle_for", "task_count", "use_tree"]

# The most partials one merge takes (at the default sketch size, 64 × 2.25 MiB = 144 MiB a task).
FAN_IN = 64
# What the flat aggregate may send its one task before a tree is used: 256 sketches of the default size (576 MiB).
# Below it the flat aggregate costs less (one stage fewer, and its partials are the row-bytes fast path's,
# execution/HashRowBytes, which a grouped aggregate is not); a state (tens of bytes, 4 KiB for dsha-secure-v1) takes
# a tree only at millions (or, secure, ~150,000) partitions.
TREE_BYTES = 256 * 48 * 49152
# More tasks than one stage of any real job has (a Spark driver keeps per-task state for each): partials so small that
# this many fit in TREE_BYTES never take a tree, so their input's plan is not read for its task count (a state of
# dsha-v1, ~72 bytes: ~8 million partitions would be needed).
MOST_TASKS = 1_000_000


def use_tree(partitions: Optional[int], partial_bytes: int) -> bool:
    """Whether ``partitions`` partials of ``partial_bytes`` each are merged as a tree (unknown: no)."""
    return partitions is not None and partitions > FAN_IN and partitions * partial_bytes > TREE_BYTES


def levels(partitions: int, fan_in: int = FAN_IN) -> List[int]:
    """The group counts of the tree's levels above ``partitions`` partials, each level's groups taking at most
    ``fan_in`` of the level below; empty when one merge of them all takes at most ``fan_in``."""
    counts, n = [], partitions
    while n > fan_in:
        n = -(-n // fan_in)
        counts.append(n)
    return counts


def task_count(df: Any, partial_bytes: int) -> Optional[int]:
    """The number of tasks that compute ``df``'s last stage (each a partial of a global aggregate over it, of about
    ``partial_bytes``), from its physical plan without running it; None where the client cannot see it (Spark
    Connect), the plan does not say, or partials this small never take a tree (:data:`MOST_TASKS`: the plan is not
    read, 12-45 ms on the driver)."""
    if is_connect(df.sparkSession) or partial_bytes * MOST_TASKS <= TREE_BYTES:
        return None
    try:
        plan = df._jdf.queryExecution().executedPlan()
        if plan.nodeName() == "AdaptiveSparkPlan":  # has exchanges: the last stage's partitions are the plan's
            n = plan.inputPlan().outputPartitioning().numPartitions()
            return int(n) if n > 0 else None
        text = plan.toString()
        if "Exchange" in text or "ubquery" in text:  # adaptive execution off: execute() could run jobs (broadcasts,
            return None  # subqueries); leave such plans flat
        return int(plan.execute().getNumPartitions())  # no exchange: lazy, the scan's splits
    except Exception:  # an internal API that changed: the flat aggregate, as before
        return None


def merged(df: Any, partial: Any, merge: str, partitions: Optional[int], partial_bytes: int,
           fan_in: int = FAN_IN) -> Any:
    """A one-row DataFrame whose column ``s`` is the aggregate ``partial`` (a Column, or SQL text such as
    ``dsha_sketch(*)``, whose results are about ``partial_bytes`` each) over ``df``: flat unless :func:`use_tree`
    (``partitions``: see :func:`task_count`), else merged as a tree by ``merge`` (e.g. ``dsha_sketch_merge``), run
    inside :func:`shuffle_for` of the same ``partitions``. Over no rows, the tree gives the flat aggregate's result
    (the partial of no rows, merged with nothing)."""
    column = F.expr(partial) if isinstance(partial, str) else partial
    if partitions is None or not use_tree(partitions, partial_bytes):
        return df.agg(column.alias("s"))
    counts = levels(partitions, fan_in)
    rows = df.groupBy(F.expr(f"spark_partition_id() div {fan_in}").alias("g")).agg(column.alias("s"))
    for _ in counts[1:]:
        rows = rows.groupBy(F.expr(f"g div {fan_in}").alias("g")).agg(F.expr(f"{merge}(s)").alias("s"))
    none = df.limit(0).agg(column.alias("s"))  # the partial of no rows: what the tree gives for no rows
    return rows.select("s").unionByName(none).selectExpr(f"{merge}(s) AS s")


def shuffle_for(spark: Any, partitions: Optional[int], partial_bytes: int, fan_in: int = FAN_IN) -> Any:
    """The settings block for a tree's queries: a shuffle partition per group of the first level, when there are more
    groups than ``spark.sql.shuffle.partitions`` (else the session's settings, unchanged)."""
    groups = levels(partitions, fan_in) if partitions is not None and use_tree(partitions, partial_bytes) else []
    if not groups:  # no tree: nothing to read or set (on Spark Connect each read is a round trip)
        return session_settings(spark, {})
    current = int(spark.conf.get("spark.sql.shuffle.partitions", "200") or 200)
    return session_settings(spark, {"spark.sql.shuffle.partitions": str(groups[0])} if groups[0] > current else {})
