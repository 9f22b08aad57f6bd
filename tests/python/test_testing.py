"""dsha.testing (docs/testing.md): assert_equal's verdict and message against exceptAll and a join of the same data;
its tolerance rule against the rule computed in Python and a brute-force pairing; bounded messages for large and
wide differences; data snapshots against dsha.fingerprint, and their workflow in pytest sessions of their own
(pytester: create, pass, fail naming the column, rewrite). Classic and Spark Connect."""
import importlib.metadata
import itertools
import json
import math
import os
import random
import subprocess
import sys
import unittest
import warnings
from collections import Counter
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

import dsha
from dsha.errors import DshaWarning
from dsha.testing import Tolerance, assert_equal, assert_snapshot
from dsha.testing.report import row_text
from dsha.testing.tolerance import beyond_tolerance, resolve

pytest_plugins = ("pytester",)

FLAT = ["id", "CAST(id % 997 AS DECIMAL(9, 2)) AS price",
        "IF(id % 11 = 0, NULL, CONCAT('n', CAST(id % 101 AS STRING))) AS name", "IF(id % 19 = 0, NULL, CAST(id AS DOUBLE) / 4) AS x"]


def flat(spark, n):
    return spark.range(n).selectExpr(*FLAT)


def failure(actual, expected, **kwargs):
    with pytest.raises(AssertionError) as e:
        assert_equal(actual, expected, **kwargs)
    return str(e.value)


def section(message, title):
    """The lines of a message section (``title (...):`` then indented lines)."""
    lines = message.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title + " ("))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        out.append(line[2:])
    return out


def column_counts_of(only_actual, only_expected, columns):
    """The reference of per-column counts over exceptAll's rows: per column, the values of one side's excess that the
    other's lacks (as multisets), the larger side's count."""
    out = {}
    for i, c in enumerate(columns):
        a, e = Counter(r[i] for r in only_actual), Counter(r[i] for r in only_expected)
        out[c] = max(sum((a - e).values()), sum((e - a).values()))
    return out



# Transport-independent parts (tolerance arithmetic, message bounds, the pytest plugin): once, in the classic pass.
classic_only = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                  reason="does not depend on the transport: once, in the classic pass")

def test_equal_tables_pass_in_any_order_and_duplicates_count(spark):
    expected = flat(spark, 2000)
    assert_equal(expected.repartition(3).orderBy(F.desc("id")), expected)
    actual = expected.unionByName(expected.where("id = 7"))
    message = failure(actual, expected)
    assert actual.exceptAll(expected).count() == 1 and expected.exceptAll(actual).count() == 0
    assert "DataFrames differ: actual has 2,001 rows, expected 2,000" in message
    assert "1 rows only in actual, 0 only in expected" in message
    assert section(message, "only in actual") == [row_text(expected.where("id = 7").first(), expected.columns)]


def test_message_rows_and_counts_are_except_alls(spark):
    expected = flat(spark, 1500)
    actual = (expected.where("id >= 5")
              .unionByName(expected.where("id < 3").withColumn("name", F.lit("changed")))
              .unionByName(expected.where("id < 2").withColumn("id", F.col("id") + 5000)))
    message = failure(actual, expected, max_rows=3)
    only_actual, only_expected = actual.exceptAll(expected).collect(), expected.exceptAll(actual).collect()
    assert f"{len(only_actual)} rows only in actual, {len(only_expected)} only in expected" in message
    shown_actual, shown_expected = section(message, "only in actual"), section(message, "only in expected")
    assert len(shown_actual) == 3 and f"only in actual (3 of {len(only_actual)}):" in message
    assert set(shown_actual) <= {row_text(r, actual.columns) for r in only_actual}
    assert set(shown_expected) <= {row_text(r, actual.columns) for r in only_expected}
    counts = column_counts_of(only_actual, only_expected, actual.columns)
    line = next(line for line in message.splitlines() if "columns that differ (rows):" in line)
    shown = dict(part.rsplit(" ", 1) for part in line.split(": ", 1)[1].split(", "))
    assert {c: int(n) for c, n in shown.items()} == {c: n for c, n in counts.items() if n}


def test_keyed_message_pairs_changed_values(spark):
    expected = flat(spark, 600)
    actual = (expected.where("id NOT IN (10)")
              .withColumn("name", F.when(F.col("id") < 3, F.lit("changed")).otherwise(F.col("name")))
              .withColumn("x", F.when(F.col("id") == 5, F.lit(-1.0)).otherwise(F.col("x")))
              .unionByName(expected.where("id = 1").withColumn("id", F.lit(99999).cast("bigint"))))
    message = failure(actual, expected, key="id", max_rows=10)
    # The reference: a join on the key, values compared in Python.
    values = ("price", "name", "x")
    joined = actual.alias("a").join(expected.alias("e"), "id").select(
        "id", *[F.col(f"{side}.{c}").alias(f"{side}_{c}") for side in "ae" for c in values]).collect()
    changes = {(r["id"], c) for r in joined for c in values if r[f"a_{c}"] != r[f"e_{c}"]}
    assert changes == {(0, "name"), (1, "name"), (2, "name"), (5, "x")}
    assert "4 rows changed (key id), 1 rows only in actual, 1 only in expected" in message
    lines = section(message, "changed values, actual -> expected")
    assert sorted(lines) == sorted(["id=0: name 'changed' -> null", "id=1: name 'changed' -> 'n1'",
                                    "id=2: name 'changed' -> 'n2'", "id=5: x -1.0 -> 1.25"])
    assert section(message, "only in actual") == [row_text(actual.where("id = 99999").first(), actual.columns)]
    assert section(message, "only in expected") == [row_text(expected.where("id = 10").first(), actual.columns)]
    assert "columns that differ (rows): name 3, x 1" in message


def test_schema_difference_is_reported_with_row_counts(spark):
    expected = flat(spark, 50)
    actual = flat(spark, 40).withColumn("price", F.col("price").cast("decimal(10,2)")).withColumn("extra", F.lit(1))
    message = failure(actual, expected)
    assert message.splitlines() == ["DataFrames differ: actual has 40 rows, expected 50",
                                    "schemas differ (actual -> expected):", "  removed: extra int",
                                    "  retyped: price decimal(10,2) -> decimal(9,2)"]


@classic_only
@pytest.mark.parametrize("key", [None, "id"])
def test_large_and_wide_differences_give_bounded_messages(spark, key):
    long_text = "REPEAT(CONCAT('v', CAST(id AS STRING)), 25)"
    expected = spark.range(3000).selectExpr("id", *[f"{long_text} AS c{i}" for i in range(40)])
    actual = expected.withColumn("c7", F.concat(F.col("c7"), F.lit("!")))
    message = failure(actual, expected, key=key, max_rows=15)
    lines = message.splitlines()
    assert len(lines) <= 60 and len(message) <= 8000 and max(map(len, lines)) <= 202, (len(lines), len(message))
    n = actual.exceptAll(expected).count()
    assert n == 3000
    if key:
        assert "3,000 rows changed (key id), 0 rows only in actual, 0 only in expected" in message
        assert "columns that differ (rows): c7 3,000" in message
        assert "changed values, actual -> expected (15 of 3,000):" in message
    else:
        assert "3,000 rows only in actual, 3,000 only in expected" in message
        assert "only in actual (15 of 3,000):" in message and "only in expected (15 of 3,000):" in message


# ---- tolerance


def within(a, e, t):
    """The rule, in Python."""
    if a is None or e is None:
        return a is None and e is None
    if isinstance(a, float) and (math.isnan(a) or math.isnan(e)):
        return math.isnan(a) and math.isnan(e)
    if a == e:
        return True
    if isinstance(a, Decimal):
        exact = lambda v: v if isinstance(v, Decimal) else Decimal(repr(v))
        return abs(a - e) <= exact(t.atol) + exact(t.rtol) * abs(e)
    return math.isfinite(a) and math.isfinite(e) and abs(a - e) <= t.atol + t.rtol * abs(e)


SCHEMA = "id BIGINT, x DOUBLE, d DECIMAL(10, 2)"
NAN, INF = float("nan"), float("inf")
CASES = [  # (actual x, expected x, actual d, expected d, tolerance, passes)
    (1.5, 1.0, Decimal("1.00"), Decimal("1.00"), Tolerance(atol=0.5), True),
    (math.nextafter(1.5, INF), 1.0, Decimal("1.00"), Decimal("1.00"), Tolerance(atol=0.5), False),
    (0.5, 1.0, Decimal("1.00"), Decimal("1.00"), 0.5, True),
    (101.0, 100.0, Decimal("1.00"), Decimal("1.00"), Tolerance(rtol=0.01), True),
    (math.nextafter(101.0, INF), 100.0, Decimal("1.00"), Decimal("1.00"), Tolerance(rtol=0.01), False),
    (1.0, 1.0, Decimal("1.05"), Decimal("1.00"), {"d": 0.05}, True),
    (1.0, 1.0, Decimal("1.06"), Decimal("1.00"), {"d": 0.05}, False),
    (1.0, 1.0, Decimal("0.95"), Decimal("1.00"), {"d": Tolerance(rtol=0.05)}, True),
    (1.0, 1.0, Decimal("0.94"), Decimal("1.00"), {"d": Tolerance(rtol=0.05)}, False),
    (NAN, 1.0, Decimal("1.00"), Decimal("1.00"), 1e9, False),
    (NAN, NAN, Decimal("1.01"), Decimal("1.00"), 0.01, True),
    (None, 1.0, Decimal("1.00"), Decimal("1.00"), 1e9, False),
    (None, None, Decimal("1.01"), Decimal("1.00"), 0.01, True),
    (1.0, 1.0, None, Decimal("1.00"), 1e9, False),
    (INF, INF, Decimal("1.01"), Decimal("1.00"), 0.01, True),
    (INF, 1e308, Decimal("1.00"), Decimal("1.00"), 1e300, False),
    (-INF, INF, Decimal("1.00"), Decimal("1.00"), 1e300, False),
    (1e308, INF, Decimal("1.00"), Decimal("1.00"), Tolerance(rtol=0.5), False),
    (1.2, 1.0, Decimal("1.01"), Decimal("1.00"), {"x": 0.5}, False),  # d has no tolerance
    (1.0, 1.0, Decimal("1.07"), Decimal("1.00"), {"d": Tolerance(atol=Decimal("0.07"))}, True),
    (1.0, 1.0, Decimal("1.08"), Decimal("1.00"), {"d": Tolerance(atol=Decimal("0.07"))}, False),
]


@classic_only
@pytest.mark.parametrize("case", range(len(CASES)))
def test_tolerance_edges(spark, case):
    ax, ex, ad, ed, tolerance, passes = CASES[case]
    t = {c: v if isinstance(v, Tolerance) else Tolerance(atol=v) for c, v in tolerance.items()} \
        if isinstance(tolerance, dict) else dict.fromkeys(("x", "d"), tolerance if isinstance(tolerance, Tolerance)
                                                          else Tolerance(atol=tolerance))
    by_rule = all(within(a, e, t[c]) if c in t else (a == e or (a != a and e != e))
                  for c, a, e in (("x", ax, ex), ("d", ad, ed)))
    assert by_rule == passes
    actual = spark.createDataFrame([(1, ax, ad), (2, 0.0, Decimal("3.00"))], SCHEMA)
    expected = spark.createDataFrame([(1, ex, ed), (2, 0.0, Decimal("3.00"))], SCHEMA)
    key = "id" if case % 2 else None  # the verdict does not depend on the key: half the cases each way
    if passes:
        assert_equal(actual, expected, key=key, tolerance=tolerance)
    else:
        message = failure(actual, expected, key=key, tolerance=tolerance)
        assert "1 of 1 rows only in actual and 1 of 1 only in expected have no partner within tolerance" in message


def brute_force_pairs(actual, expected, t):
    """Whether the rows pair up within tolerance, by trying every pairing of each group (rows equal in g)."""
    for g in {r[0] for r in actual + expected}:
        a, e = [r for r in actual if r[0] == g], [r for r in expected if r[0] == g]
        if len(a) != len(e) or not any(all(within(x[1], y[1], t) for x, y in zip(a, p))
                                       for p in itertools.permutations(e)):
            return False
    return True


@classic_only
def test_key_less_pairing_agrees_with_brute_force(spark):
    t = Tolerance(atol=0.25, rtol=0.1)
    rng = random.Random(7)
    verdicts = Counter()
    for _ in range(8):
        expected = [(rng.randrange(2), float(rng.randrange(-8, 9)) / 2) for _ in range(6)]
        actual = [(g, x + rng.choice([0.0, 0.0, 0.25, -0.25, 0.3, -0.6])) for g, x in expected]
        rng.shuffle(actual)
        passes = brute_force_pairs(actual, expected, t)
        verdicts[passes] += 1
        left, right = (spark.createDataFrame(rows, "g INT, x DOUBLE") for rows in (actual, expected))
        if passes:
            assert_equal(left, right, tolerance=t)
        else:
            with pytest.raises(AssertionError, match="no partner within tolerance"):
                assert_equal(left, right, tolerance=t)
    assert verdicts[True] and verdicts[False]  # both verdicts were put to the test


@classic_only
def test_rows_beyond_tolerance_are_paired_once_for_both_sides(spark):
    """Rows pair by rank within their exact columns: (0, 1.0)-(0, 1.1) within 0.25; (0, 2.0)-(0, 9.0) pair but
    differ beyond it; g=1 and g=2 have no partner. Both sides' counts are one job over the unpartnered pairs (whose
    windows and join a failing assertion then reads from its cache), and equal each side counted alone."""
    actual = spark.createDataFrame([(0, 1.0), (0, 2.0), (1, 5.0)], "g INT, x DOUBLE")
    expected = spark.createDataFrame([(0, 1.1), (0, 9.0), (2, 5.0)], "g INT, x DOUBLE")
    lonely = beyond_tolerance(actual, expected, resolve(Tolerance(atol=0.25), actual.schema, []))
    assert sorted(map(tuple, lonely.actual.collect())) == [(0, 2.0), (1, 5.0)]
    assert sorted(map(tuple, lonely.expected.collect())) == [(0, 9.0), (2, 5.0)]
    sc, group = spark.sparkContext, "dsha-test-beyond-tolerance-counts"
    sc.setJobGroup(group, group)
    try:
        assert lonely.counts() == (2, 2)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert len(sc.statusTracker().getJobIdsForGroup(group)) == 1
    assert lonely.counts() == (lonely.actual.count(), lonely.expected.count())


@classic_only
def test_noise_in_every_row_passes_within_tolerance_and_the_rest_is_reported(spark):
    expected = spark.range(2000).selectExpr("id", "id % 5 AS g", "CAST(id AS DOUBLE) / 7 AS x")
    actual = expected.withColumn("x", F.col("x") + (F.col("id") % 7 - 3) * F.lit(1e-9))
    assert_equal(actual, expected, tolerance=1e-6)
    assert_equal(actual, expected, key="id", tolerance={"x": Tolerance(rtol=1e-6, atol=1e-8)})
    noisy = actual.exceptAll(expected).count()
    assert noisy == sum(1 for i in range(2000) if i % 7 != 3)
    message = failure(actual, expected, key="id", tolerance=1e-12)
    assert f"{noisy:,} of {noisy:,} rows only in actual and {noisy:,} of {noisy:,} only in expected" in message
    assert "tolerance: x atol=1e-12 rtol=0" in message and f"columns that differ (rows): x {noisy:,}" in message
    # One row beyond tolerance among rows within it: only that one is reported, as a change by key.
    beyond = actual.withColumn("x", F.when(F.col("id") == 5, F.lit(99.0)).otherwise(F.col("x")))
    message = failure(beyond, expected, key="id", tolerance=1e-6)
    assert "1 of" in message and section(message, "changed values, actual -> expected") == [
        "id=5: x 99.0 -> 0.7142857142857143"]


@classic_only
def test_bad_arguments_name_the_column_or_setting(spark):
    df = flat(spark, 3)
    for kwargs, text in [({"tolerance": {"name": 0.1}}, "column 'name': its type string is not float"),
                         ({"tolerance": {"nope": 0.1}}, "column 'nope': no such column"),
                         ({"tolerance": {"x": 0.1}, "key": "x"}, "column 'x': a key column is compared exactly"),
                         ({"tolerance": -1.0}, "atol must be a finite number >= 0"),
                         ({"tolerance": "0.1"}, "must be a number"),
                         ({"check_row_order": True}, "check_row_order=True is not applicable"),
                         ({"key": "nope"}, "key column nope is not a column of actual"),
                         ({"columns": ["id", "nope"]}, "column nope is not a column of actual"),
                         ({"exclude": "nope"}, "excluded column nope is not a column of actual or expected"),
                         ({"max_rows": 16}, "max_rows must be an int from 0 to 15")]:
        with pytest.raises((ValueError, TypeError), match=text):
            assert_equal(df, df, **kwargs)


@classic_only
def test_columns_and_exclude(spark):
    expected = flat(spark, 100)
    actual = expected.withColumn("_ingested_at", F.current_timestamp()).withColumn("name", F.lit("n"))
    assert_equal(actual, expected, exclude=["_ingested_at", "name"])
    assert_equal(actual, expected, columns=["price", "x"], key="id")
    assert "columns that differ (rows): name" in failure(actual, expected, exclude="_ingested_at", key="id")


@classic_only
def test_unittest_reports_the_message_as_a_failure(spark):
    expected = flat(spark, 20)

    class Case(unittest.TestCase):
        def test_equal(self):
            assert_equal(expected.orderBy(F.desc("id")), expected)

        def test_differs(self):
            assert_equal(expected.where("id > 0"), expected)

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert result.testsRun == 2 and not result.errors and len(result.failures) == 1
    test, trace = result.failures[0]
    assert test.id().endswith("test_differs")
    assert "0 rows only in actual, 1 only in expected" in trace
    assert "only in expected (1):\n  " + row_text(expected.where("id = 0").first(), expected.columns) in trace


# ---- snapshots


def test_snapshot_file_holds_fingerprints_and_mismatches_name_the_columns(spark, tmp_path):
    df = flat(spark, 100).withColumn("a.b", F.lit("dot"))
    path = tmp_path / "daily.json"
    with pytest.warns(DshaWarning, match="dsha snapshot written"):
        assert_snapshot(df, path)
    stored = json.loads(path.read_text())
    fp = dsha.fingerprint(df)
    assert (stored["format"], stored["digest"], stored["rows"], stored["schema"]) == (
        "dsha-snapshot-v1", fp.digest, 100, fp.schema)
    for c in df.columns:
        alone = dsha.fingerprint(df.select(F.col(f"`{c}`")))
        assert stored["columns"][c]["digest"] == alone.digest
        assert alone.schema == f'struct<"{c}":{stored["columns"][c]["type"]}>'
    assert stored["columns"]["price"]["type"] == "decimal(9,2)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_snapshot(df.orderBy(F.desc("id")), path)
    changed = df.withColumn("name", F.upper("name")).withColumn("price", F.col("price").cast("double"))
    with pytest.raises(AssertionError) as e:
        assert_snapshot(changed, path)
    lines = str(e.value).splitlines()
    assert lines[0] == f"data differs from snapshot {path}:"
    assert lines[1:5] == ["  rows: 100 (same)", "  columns retyped: price decimal(9,2) -> double",
                          "  columns whose values changed: name", "  columns unchanged: id, x, a.b"]
    assert "--dsha-update-snapshots" in lines[5]
    with pytest.warns(DshaWarning, match="updated"):
        assert_snapshot(changed, path, update=True)
    assert json.loads(path.read_text())["digest"] == dsha.fingerprint(changed).digest
    path.write_text("{not json")
    with pytest.raises(ValueError, match=f"{path}: not a dsha snapshot"):
        assert_snapshot(df, path)


def test_a_row_swap_keeps_every_column_and_says_so(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, v STRING")
    with pytest.warns(DshaWarning, match="written"):
        assert_snapshot(df, tmp_path / "s.json")
    with pytest.raises(AssertionError, match="every column holds the same values, combined into rows differently"):
        assert_snapshot(spark.createDataFrame([(1, "b"), (2, "a")], "id INT, v STRING"), tmp_path / "s.json")


DAILY = """
from pyspark.sql import functions as F


def test_daily(spark, dsha_snapshot):
    df = spark.range({n}).selectExpr("id", "CONCAT('n', CAST(id % 7 AS STRING)) AS name", "id * 2 AS twice")
    dsha_snapshot(df.withColumn("name", {name}), "daily")
"""


class _SessionPlugin:
    """Lends the suite's session to a pytest session run inside this one."""

    def __init__(self, session):
        self.session = session

    @pytest.fixture
    def spark(self):
        return self.session


@classic_only
def test_snapshot_workflow_in_a_pytest_session(spark, pytester):
    if not any(ep.value == "dsha.testing.plugin" for ep in importlib.metadata.entry_points(group="pytest11")):
        pytest.fail("the pytest11 entry point dsha.testing.plugin is not installed: pip install -e python")
    run = lambda *args: pytester.runpytest("-p", "no:cacheprovider", *args, plugins=[_SessionPlugin(spark)])
    pytester.makepyfile(test_report=DAILY.format(n=100, name='F.col("name")'))
    stored = pytester.path / "__dsha_snapshots__" / "test_report" / "daily.json"
    first = run()
    first.assert_outcomes(passed=1, warnings=1)
    first.stdout.fnmatch_lines(["*dsha snapshot written: *daily.json (100 rows)*"])
    df = spark.range(100).selectExpr("id", "CONCAT('n', CAST(id % 7 AS STRING)) AS name", "id * 2 AS twice")
    assert json.loads(stored.read_text())["digest"] == dsha.fingerprint(df).digest
    run().assert_outcomes(passed=1)
    pytester.makepyfile(test_report=DAILY.format(n=98, name='F.when(F.col("id") == 4, "x").otherwise(F.col("name"))'))
    failed = run()
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*data differs from snapshot *daily.json:", "*rows: 100 -> 98 (-2)",
                                 "*columns whose values changed: id, name, twice*"])
    run("--dsha-update-snapshots").assert_outcomes(passed=1, warnings=1)
    changed = df.where("id < 98").withColumn("name", F.when(F.col("id") == 4, "x").otherwise(F.col("name")))
    assert json.loads(stored.read_text())["digest"] == dsha.fingerprint(changed).digest
    run().assert_outcomes(passed=1)


@classic_only
def test_the_plugin_loads_by_its_entry_point_without_pyspark(tmp_path):
    (tmp_path / "test_light.py").write_text(
        "import sys\n\n\ndef test_light(request):\n"
        "    assert request.config.getoption('dsha_update_snapshots') is True\n"
        "    assert callable(request.getfixturevalue('dsha_snapshot'))\n"
        "    assert not [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pyarrow')]\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--dsha-update-snapshots",
                           str(tmp_path)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
