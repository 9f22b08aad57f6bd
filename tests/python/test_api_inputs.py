"""The Python API given what users hand it: a pandas, pyarrow or polars frame goes to the Arrow engine, which gives
Spark's digest of the same rows; a path, or a frame beside a Spark DataFrame or with engine="jvm", is a TypeError
naming the call that takes it (not an AttributeError about ``sparkSession``), and the call it names gives Spark's
digest; reprs of results are a few readable lines."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha
import dsha.arrow

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="which objects the API takes does not depend on the transport: once, in the "
                                "classic pass")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    t = pa.table({"id": pa.array(range(40), pa.int64()), "name": pa.array([f"n{i}" for i in range(40)])})
    path = str(tmp_path_factory.mktemp("api_inputs") / "t.parquet")
    pq.write_table(t, path)
    return t, path


def _frames(t):
    frames = {"pyarrow": t, "pandas": t.to_pandas()}
    try:
        import polars

        frames["polars"] = polars.from_arrow(t)
    except ImportError:
        pass
    return frames


@pytest.mark.parametrize("call", ["fingerprint", "state"])
def test_a_frame_goes_to_the_arrow_engine_which_gives_sparks_digest(spark, table, call):
    t, path = table
    expected = getattr(dsha, call)(spark.read.parquet(path))
    for kind, frame in _frames(t).items():
        # handed to the Arrow engine (tests/arrow/test_api_frames.py), which computes what Spark computes
        assert getattr(dsha, call)(frame) == getattr(dsha.arrow, call)(frame) == expected, kind
        # with Spark's engine asked for, a TypeError naming both ways
        with pytest.raises(TypeError) as e:
            getattr(dsha, call)(frame, engine="jvm")
        message = str(e.value)
        assert message.startswith(f"dsha.{call} takes a Spark DataFrame, not a {kind} "), message
        assert f"dsha.arrow.{call}(df)" in message and "spark.createDataFrame" in message, message


def test_a_path_names_the_calls_that_read_it(spark, table):
    _, path = table
    for given in (path, __import__("pathlib").Path(path)):
        with pytest.raises(TypeError) as e:
            dsha.fingerprint(given)
        message = str(e.value)
        assert f"not a path ({path!r})" in message
        assert f"dsha.fingerprint_path(spark, {path!r}" in message and f"dsha.arrow.fingerprint({path!r})" in message
    # the calls it names give Spark's digest of the file (the module runs in the classic pass only)
    expected = dsha.fingerprint(spark.read.parquet(path)).digest
    assert dsha.arrow.fingerprint(path).digest == expected
    assert dsha.fingerprint_path(spark, path).digest == expected


def test_equal_and_diff_name_their_right_calls(spark, table):
    t, path = table
    df = spark.read.parquet(path)
    with pytest.raises(TypeError, match=r"^dsha\.equal takes a Spark DataFrame, not a pandas DataFrame: .*"
                                        r"dsha\.Comparison\(dsha\.arrow\.fingerprint\(left\), "):
        dsha.equal(df, t.to_pandas())
    assert dsha.Comparison(dsha.arrow.fingerprint(t), dsha.arrow.fingerprint(t.slice(1))).reason == \
        dsha.equal(df, df.where("id != 0")).reason == "row count"
    with pytest.raises(TypeError, match=r"^dsha\.diff takes a Spark DataFrame, not a pyarrow Table: "
                                        r"dsha\.diff\(spark\.createDataFrame\(\.\.\.\)\).*; without Spark, the "
                                        r"Arrow engine: dsha\.arrow\.diff\.diff\(left, right\)$"):
        dsha.diff(t, df)
    # the call it names finds the rows Spark's dsha.diff finds
    from dsha.arrow.diff import diff as arrow_diff

    arrow = arrow_diff(t, t.slice(1))
    spark_diff = dsha.diff(df, df.where("id != 0"))
    assert (arrow.only_left_count, arrow.only_right_count) == (spark_diff.only_left_count, 0) == (1, 0)
    assert arrow.only_left.to_pylist() == [r.asDict() for r in spark_diff.only_left.collect()]
    with pytest.raises(TypeError, match=r"^dsha\.diff takes a Spark DataFrame, not a path"):
        dsha.diff(df, path)
    with pytest.raises(TypeError, match=r"^dsha\.fingerprint takes a Spark DataFrame, not builtins\.list$"):
        dsha.fingerprint([1, 2])


def test_fingerprint_repr_is_one_field_a_line_and_evaluates_back(spark):
    fp = dsha.fingerprint(spark.createDataFrame([(1, "a"), (2, "b")], "id INT, name STRING"))
    text = repr(fp)
    lines = text.splitlines()
    assert lines[0] == "Fingerprint(" and lines[-1] == ")"
    assert f"    digest={fp.digest!r}," in lines and f"    schema={fp.schema!r}," in lines
    assert f"    rows={fp.rows}," in lines and text.count(fp.schema) == 1
    assert eval(text, {"Fingerprint": dsha.Fingerprint}) == fp


def test_comparison_repr_shows_the_schema_once_when_shared(spark):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, name STRING")
    cmp = dsha.equal(df, df.where("id = 1"))
    text = repr(cmp)
    assert len(text.splitlines()) >= 5 and all(len(line) < 120 for line in text.splitlines())
    assert text.count(cmp.left.schema) == 1
    assert "reason='row count'" in text and f"rows={cmp.left.rows})" in text and f"rows={cmp.right.rows})" in text
    other = dsha.equal(df, df.selectExpr("id"))
    text = repr(other)
    assert f"left_schema={other.left.schema!r}" in text and f"right_schema={other.right.schema!r}" in text
    assert "reason='schema'" in text


def _multiset(df):
    return __import__("collections").Counter(tuple(r) for r in df.collect())


def test_diff_over_different_schemas_names_the_common_columns(spark):
    left = spark.createDataFrame([(i, f"n{i}", i * 1.0) for i in range(6)], "id INT, name STRING, x DOUBLE")
    right = spark.createDataFrame([(i, f"n{i}", i) for i in range(1, 7)], "id INT, name STRING, x BIGINT") \
        .withColumn("extra", __import__("pyspark.sql.functions", fromlist=["lit"]).lit(1))
    with dsha.diff(left, right) as d:
        assert d.schema_difference and not d
        for side in ("only_left", "only_right"):
            with pytest.raises(dsha.DiffError) as e:
                getattr(d, side)
            message = str(e.value)
            assert message.startswith(f"Diff.{side}: the schemas differ (")
            assert "extra" in message and "x" in message
            assert message.endswith("dsha.diff(left, right, columns=['id', 'name'])"), message
        text = repr(d)
        assert text.startswith("Diff(equal=False, method='schema',") and "extra" in text and text.endswith(")")
    # the call it names works, and finds what exceptAll finds on those columns
    with dsha.diff(left, right, columns=["id", "name"]) as d:
        assert _multiset(d.only_left) == _multiset(left.select("id", "name").exceptAll(right.select("id", "name")))
        assert _multiset(d.only_right) == _multiset(right.select("id", "name").exceptAll(left.select("id", "name")))
        assert d.only_left_count == 1 and d.only_right_count == 1
        lines = repr(d).splitlines()
        assert lines[0] == f"Diff(equal=False, method={d.method!r},"
        assert f"    left=(digest={d.left_digest!r}, rows=6)," in lines
        assert "    only_left=1, only_right=1, changed=0," in lines and lines[-1] == ")"


def test_cli_diff_over_different_schemas_still_reports_them(spark, tmp_path):
    from cli_runner import run_cli

    spark.createDataFrame([(1, "a")], "id INT, name STRING").write.parquet(str(tmp_path / "l"))
    spark.createDataFrame([(1, 2)], "id INT, x INT").write.parquet(str(tmp_path / "r"))
    out = run_cli("diff", tmp_path / "l", tmp_path / "r")
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines()[0] == "schemas differ:" and "added:   x" in out.stdout, out.stdout
