"""``exclude=`` on ``dsha.fingerprint``, ``dsha.equal`` and ``dsha.diff`` (the jar's path and the jar-free one) and
``--exclude`` on the CLI's Spark engine (issue 32): each result against the same call on the frames with the columns
dropped (``df.drop``), the diff's rows against ``exceptAll`` of the dropped frames, the Arrow engine against Spark."""
import json
import os
from collections import Counter

import pytest

pytest.importorskip("pyarrow")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import dsha  # noqa: E402
import dsha.arrow  # noqa: E402
from cli_runner import run_cli  # noqa: E402

CLASSIC_ONLY = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="classic pass only")
SCHEMA = "id int, name string, price double, _ingested_at string"


def _frames(spark):
    """Two tables of 40 rows: the same data but for 3 changed prices, their audit column different in every row."""
    rows = [(i, f"n{i % 7}", i * 1.5, f"2026-01-01 {i}") for i in range(40)]
    other = [(i, n, p + (1 if i in (3, 17, 30) else 0), f"2026-02-02 {i}") for i, n, p, _ in rows]
    return spark.createDataFrame(rows, SCHEMA), spark.createDataFrame(other[::-1], SCHEMA)


def _multiset(df):
    return Counter(tuple(r) for r in df.collect())


@CLASSIC_ONLY
def test_fingerprint_and_equal_are_those_of_the_dropped_frames(spark):
    """On both engines alike: the columns are dropped (a select) before the engine is chosen (dsha/digests.py)."""
    left, right = _frames(spark)
    assert dsha.fingerprint(left, exclude=["_ingested_at"]) == dsha.fingerprint(left.drop("_ingested_at"))
    assert dsha.fingerprint(left, columns=["id", "price", "name"], exclude="NAME") == \
        dsha.fingerprint(left.select("id", "price"))  # with columns=: those without the excluded; names as Spark's
    both = dsha.equal(left, right, exclude=["_ingested_at", "price"])
    audit_only = dsha.equal(left, right.drop("price"), exclude=["_ingested_at", "price"])
    assert both and (audit_only.left, audit_only.right) == (both.left, both.right)  # dropped where a side has it
    assert both.left.schema == dsha.arrow.canonical_schema(pa.schema([("id", pa.int32()), ("name", pa.string())]))


@CLASSIC_ONLY
def test_diff_is_except_all_of_the_dropped_frames(spark):
    """The jar's passes, then the jar-free ones (engine="python"), against exceptAll of the dropped frames. Classic
    pass only: the columns are dropped by a select before either path runs (spark/frames.excluding), whatever the
    transport; test_diff and test_jarfree_diff run both paths on Spark Connect."""
    left, right = _frames(spark)
    l_dropped, r_dropped = left.drop("_ingested_at"), right.drop("_ingested_at")
    only = _multiset(l_dropped.exceptAll(r_dropped)), _multiset(r_dropped.exceptAll(l_dropped))
    for engine in ("jvm", "python"):
        with dsha.diff(left, right, exclude=["_ingested_at"], engine=engine) as d:
            assert (_multiset(d.only_left), _multiset(d.only_right)) == only
            assert (d.only_left_count, d.only_right_count) == (sum(only[0].values()), sum(only[1].values()))


@CLASSIC_ONLY
def test_errors_are_one_line_naming_the_column(spark):
    left, right = _frames(spark)
    for call, text in [(lambda: dsha.fingerprint(left, exclude=["_ingested"]),
                        "excluded column _ingested is not a column of the DataFrame: did you mean _ingested_at?"),
                       (lambda: dsha.equal(left, right, exclude="prise"),
                        "excluded column prise is not a column of left or right: did you mean price?"),
                       (lambda: dsha.diff(left, right, exclude="nmae"), "did you mean name?"),
                       (lambda: dsha.fingerprint(left, exclude=left.columns), "leaves no column of the DataFrame"),
                       (lambda: dsha.diff(left, right, key="id", exclude=["ID"]),
                        "key column id is excluded: the key pairs the rows")]:
        with pytest.raises(ValueError) as e:
            call()
        assert text in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(TypeError, match="exclude takes column names"):
        dsha.fingerprint(left, exclude=[left.id])


@CLASSIC_ONLY
def test_the_arrow_engine_agrees_with_spark(spark):
    left, _ = _frames(spark)
    table = pa.Table.from_pylist([r.asDict() for r in left.collect()],
                                 schema=pa.schema([("id", pa.int32()), ("name", pa.string()), ("price", pa.float64()),
                                                   ("_ingested_at", pa.string())]))
    for exclude in (["_ingested_at"], ["name", "price"]):
        assert dsha.arrow.fingerprint(table, exclude=exclude) == dsha.fingerprint(left, exclude=exclude)


@CLASSIC_ONLY
def test_cli_exclude_on_the_spark_engine(spark, tmp_path):
    """hash and diff (compare passes --exclude to dsha.equal, as the Arrow engine's CLI test shows)."""
    left, right = _frames(spark)
    paths = []
    for name, df in (("a.parquet", left), ("b.parquet", right)):
        pq.write_table(pa.Table.from_pylist([r.asDict() for r in df.collect()]), tmp_path / name)
        paths.append(str(tmp_path / name))
    a, b = (spark.read.parquet(p) for p in paths)
    out = run_cli("hash", paths[0], "--engine", "spark", "--exclude", "_ingested_at")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == dsha.fingerprint(a.drop("_ingested_at")).digest
    d = run_cli("diff", *paths, "--engine", "spark", "--exclude", "_ingested_at", "--json")
    counts = (a.drop("_ingested_at").exceptAll(b.drop("_ingested_at")).count(),
              b.drop("_ingested_at").exceptAll(a.drop("_ingested_at")).count())
    assert d.returncode == 1, d.stderr
    assert (json.loads(d.stdout)["only_left"], json.loads(d.stdout)["only_right"]) == counts
