"""Digest states (SPEC.md §11): dsha.state (Spark), dsha.merge and Fingerprint.from_state (pure Python), and the SQL
functions dsha_state / dsha_merge / dsha_final / dsha_final_fingerprint, in classic and Spark Connect sessions."""
import json
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pyspark.sql import functions as F

import dsha
from dsha import Fingerprint
from dsha.functions import dsha as dsha_agg
from dsha.functions import dsha_final, dsha_final_fingerprint, dsha_fingerprint, dsha_merge, dsha_state

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "vectors.json")
SCHEMA = "id BIGINT, name STRING, tags ARRAY<STRING>, amount DECIMAL(12, 2), scores MAP<STRING, INT>"


def opt(s):
    return st.one_of(st.none(), s)


rows = st.lists(st.tuples(
    st.integers(-2**63, 2**63 - 1),
    opt(st.text(max_size=6)),
    opt(st.lists(opt(st.text(max_size=3)), max_size=3)),
    opt(st.decimals(min_value=-10**9, max_value=10**9, places=2, allow_nan=False)),
    opt(st.dictionaries(st.text(max_size=3), opt(st.integers(-100, 100)), max_size=2)),
), max_size=25)
PROPERTY = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))


def _fingerprint(struct_row):
    """A Fingerprint from a dsha_fingerprint / dsha_final_fingerprint struct."""
    return Fingerprint(digest=struct_row["digest"], rows=struct_row["rows"], schema_digest=struct_row["schema_digest"],
                       content_sum=struct_row["content_sum"], schema=struct_row["schema"],
                       algorithm=struct_row["algorithm"])


@PROPERTY
@given(data=rows, parts=st.integers(1, 4), assignment=st.randoms(use_true_random=False))
def test_merging_the_states_of_a_random_split_gives_the_fingerprint_of_the_whole(spark, data, parts, assignment):
    df = spark.createDataFrame(data, SCHEMA)
    tagged = spark.createDataFrame([r + (assignment.randrange(parts),) for r in data], SCHEMA + ", _part INT")
    # The parts' states in one Spark job (a part without rows has no group: merging needs only the others).
    part_states = [bytes(r.s) for r in tagged.groupBy("_part").agg(dsha_state(*df.columns).alias("s")).collect()]
    whole = dsha.fingerprint(df)
    state = dsha.state(df)
    assert Fingerprint.from_state(state) == whole
    if part_states:
        assignment.shuffle(part_states)
        merged = dsha.merge(part_states)
        assert merged == state
        assert Fingerprint.from_state(merged) == whole
    else:
        assert whole.rows == 0
    assert dsha.merge([state]) == state


def test_sql_merge_over_group_by_gives_each_groups_digest(spark, codegen_mode):
    df = spark.range(300).select((F.col("id") % 4).alias("k"), F.col("id"), F.col("id").cast("string").alias("v"))
    # States per (k, part), merged per k: each k's digest and fingerprint, as dsha gives them directly.
    parts = df.groupBy("k", F.col("id") % 7).agg(dsha_state("*").alias("s"))
    merged = (parts.groupBy("k").agg(dsha_merge("s").alias("m"))
              .select("k", dsha_final("m").alias("d"), dsha_final_fingerprint("m").alias("f")))
    got = {r.k: (r.d, _fingerprint(r.f)) for r in merged.collect()}
    direct = {r.k: (r.d, _fingerprint(r.f))
              for r in df.groupBy("k").agg(dsha_agg("*").alias("d"), dsha_fingerprint("*").alias("f")).collect()}
    assert got == direct and len(got) == 4
    # The SQL merge of all the parts' states, and dsha.merge of them in Python, are the state of the whole table.
    whole = dsha.state(df)
    assert bytes(parts.agg(dsha_merge("s")).first()[0]) == whole
    assert dsha.merge(bytes(r.s) for r in parts.collect()) == whole
    # Over SQL too.
    parts.createOrReplaceTempView("state_parts")
    sql = spark.sql("SELECT dsha_final(dsha_merge(s)) AS d FROM state_parts").first().d
    assert sql == dsha.fingerprint(df).digest


def test_states_of_a_cached_table_and_columns(spark):
    df = spark.range(50).select("id", (F.col("id") * 3).cast("string").alias("v")).cache()
    try:
        assert Fingerprint.from_state(dsha.state(df, ["v"])) == dsha.fingerprint(df, "v")
        assert dsha.state(df, "v") == dsha.state(df.select("v"))
        assert Fingerprint.from_state(dsha.state(df)) == dsha.fingerprint(df)
    finally:
        df.unpersist()


def test_empty_input(spark):
    empty = spark.range(0)
    assert Fingerprint.from_state(dsha.state(empty)) == dsha.fingerprint(empty)
    assert dsha.merge([dsha.state(empty), dsha.state(spark.range(3))]) == dsha.state(spark.range(3))
    with pytest.raises(ValueError, match="at least one state"):
        dsha.merge([])
    row = spark.sql("SELECT dsha_merge(s) AS m FROM VALUES (CAST(NULL AS BINARY)) AS t(s) WHERE s IS NOT NULL").first()
    assert row.m is None


def test_golden_vector_states_finalise_in_pure_python():
    with open(GOLDEN, encoding="utf-8") as f:
        vectors = json.load(f)["vectors"]
    for v in vectors:
        fp = Fingerprint.from_state(bytes.fromhex(v["state"]))
        assert (fp.digest, fp.schema, fp.schema_digest, fp.content_sum, fp.rows, fp.algorithm) == (
            v["dsha"], v["schema"], v["schema_digest"], v["content_sum"], len(v["row_digests"]), "dsha-v1"), v["name"]


def test_states_of_different_schemas_do_not_merge(spark):
    a, b = dsha.state(spark.range(3)), dsha.state(spark.sql("SELECT 1 AS x"))
    with pytest.raises(dsha.StateError, match=r'different schemas: struct<"id":bigint> and struct<"x":int>'):
        dsha.merge([a, b])
    # The same error from Spark's dsha_merge, naming both schemas.
    states = spark.createDataFrame([(a,), (b,)], "s BINARY").repartition(2)
    with pytest.raises(Exception) as e:
        states.agg(dsha_merge("s")).collect()
    assert "different schemas" in str(e.value) and 'struct<"x":int>' in str(e.value)


def test_malformed_states_say_what_is_wrong(spark):
    good = dsha.state(spark.sql("SELECT 1 AS a"))
    cases = {
        b"hello world": "bad magic",
        good[:4] + b"\x02" + good[5:]: "format version 2",
        good + b"\x00": "1 bytes after the end",
        good[:-1] + b"b": "schema text does not match its digest",
        good[:5] + bytes([0x81, 0xB4, 0xF5, 0x81, 0x00]) + good[9:]: "not a minimal varint",
        good[:13] + b"\x00" * 32 + good[45:]: "schema text does not match its digest",
        good[:53] + struct.pack("<I", 8) + good[57:]: "has 16 bytes, not 8",
    }
    for bad, message in cases.items():
        with pytest.raises(dsha.StateError, match=message):
            Fingerprint.from_state(bad)
        with pytest.raises(dsha.StateError, match=message):
            dsha.merge([good, bad])
    for n in range(len(good)):
        with pytest.raises(dsha.StateError, match="truncated|bad magic"):
            dsha.merge([good[:n]])
    with pytest.raises(TypeError, match="state #1: a dsha state is bytes"):
        dsha.merge([good, good.hex()])
    # Spark says the same.
    with pytest.raises(Exception) as e:
        spark.sql(f"SELECT dsha_final(X'{good[:-2].hex()}')").collect()
    assert "malformed dsha state" in str(e.value) and "truncated" in str(e.value)


def test_column_functions_reject_other_types():
    with pytest.raises(TypeError, match="dsha_merge takes a column name or Column"):
        dsha_merge(1)
    with pytest.raises(ValueError, match="at least one column"):
        dsha_state()


def test_states_of_many_partitions_merged_as_a_tree_are_the_flat_states(spark, monkeypatch):
    """Issue #35 item 6: past spark/tree.py's threshold (by default millions of partitions of dsha-v1 states, ~150,000
    of dsha-secure-v1's 4 KiB) dsha.state and dsha.fingerprint merge the partitions' states as a tree (dsha_merge of
    groups of at most FAN_IN partitions); the bytes are the flat aggregate's. 70 partitions of 5 rows, and none."""
    from dsha.spark import digests, tree

    algorithm = "dsha-v1"
    df = spark.range(0, 350, 1, 70).selectExpr("id", "CAST(id % 7 AS STRING) AS s")
    empty = spark.range(0).selectExpr("id", "CAST(id % 7 AS STRING) AS s")
    flat = [(dsha.state(d, algorithm=algorithm), dsha.fingerprint(d, algorithm=algorithm)) for d in (df, empty)]
    used = []
    monkeypatch.setattr(tree, "TREE_BYTES", 0)
    monkeypatch.setattr(digests, "task_count", lambda d, size: 70)  # as classic reads it from the plan, on Connect too
    monkeypatch.setattr(digests, "merged",
                        lambda *a, **k: used.append(tree.use_tree(a[3], a[4])) or tree.merged(*a, **k))
    assert [(dsha.state(d, algorithm=algorithm), dsha.fingerprint(d, algorithm=algorithm)) for d in (df, empty)] == flat
    assert used == [True, True, True, True]
    # dsha.equal: such sides are fingerprinted one at a time, each through the tree
    assert dsha.equal(df, df.orderBy("s"), algorithm=algorithm)
    changed = dsha.equal(df, df.where("id <> 7"), algorithm=algorithm)
    assert not changed and changed.right.rows == 349 and changed.left == flat[0][1]
    assert used == [True] * 8
