"""The copies of `dev/run bench-diff` (bench/diff_bench.py): lineitem with exactly k differing rows, what every answer
about such a copy must be, and the list of wrong answers seen."""
from common import log
from runner import cache

KEY = ["l_orderkey", "l_linenumber"]


class Failures(list):
    def check(self, ok, message):
        if not ok:
            log(f"CORRECTNESS FAILURE: {message}")
            self.append(message)
        return ok


def composition(k):
    """(modified, deleted, inserted) rows of the copy with k differing rows."""
    if k == 1:
        return 1, 0, 0
    modified, deleted = k // 2, k // 4
    return modified, deleted, k - modified - deleted


def expected_counts(k):
    m, d, i = composition(k)
    return {"only_left": m + d, "only_right": m + i, "distinct": 2 * m + d + i,
            "key_changed": m, "key_only_left": d, "key_only_right": i}


def make_copy(spark, left, k):
    """left with exactly k differing rows (composition(k)), deterministic: the rows with the smallest
    xxhash64(l_orderkey, l_linenumber), ranked by (hash, key)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    m, d, i = composition(k)
    picked = (left.select(*KEY, F.xxhash64(*KEY).alias("h")).orderBy("h", *KEY).limit(m + d + i)
              .withColumn("rank", F.row_number().over(Window.orderBy("h", *KEY)))
              .withColumn("role", F.when(F.col("rank") <= m, "modify").when(F.col("rank") <= m + d, "delete")
                          .otherwise("insert"))
              .drop("h"))
    picked = picked.cache()
    check_n = picked.count()
    assert check_n == m + d + i, (check_n, m, d, i)
    quantity_type = dict(left.dtypes)["l_quantity"]
    joined = left.join(F.broadcast(picked), KEY, "left")
    modify = F.col("role") == "modify"
    odd = F.col("rank") % 2 == 1
    kept = (joined.filter(F.col("role").isNull() | (F.col("role") != "delete"))
            .withColumn("l_comment", F.when(modify & odd, F.concat("l_comment", F.lit(" [changed]")))
                        .otherwise(F.col("l_comment")))
            .withColumn("l_quantity", F.when(modify & ~odd, (F.col("l_quantity") + 1).cast(quantity_type))
                        .otherwise(F.col("l_quantity")))
            .select(*left.columns))
    inserted = (left.join(F.broadcast(picked.filter(F.col("role") == "insert")), KEY)
                .withColumn("l_linenumber", F.col("l_linenumber") + 100)
                .withColumn("l_comment", F.concat(F.lit("inserted: "), F.col("l_comment")))
                .select(*left.columns).coalesce(1))
    right, rows = cache(kept.unionByName(inserted))
    picked.unpersist()
    return right, rows
