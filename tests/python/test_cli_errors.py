"""The `dsha` command line's errors: one line (at most 3 on stderr), exit 2, naming what is wrong, and said before
Spark starts whenever they can be.

"Before Spark starts" is proved, not timed: those commands run in a fresh process whose SPARK_HOME is a stand-in
whose spark-submit only records that it was called; an error checked late would start it. Errors that need a
session run in-process on the suite's session (classic or Spark Connect), and once in a fresh process for what
only a process shows (PySpark's own loggers writing to stderr)."""
import base64
import os
import subprocess
import sys

import pytest
from cli_runner import run_cli

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI is tested in the classic pass")


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_errors")
    df = spark.createDataFrame([(i, f"name{i}", i * 1.5) for i in range(20)], "id INT, name STRING, score DOUBLE")
    df.write.parquet(str(root / "a"))
    df.where("id != 3").write.parquet(str(root / "b"))
    return root


@pytest.fixture
def no_spark(tmp_path):
    """A SPARK_HOME whose spark-submit records its call and fails: a command that reaches it started Spark."""
    home = tmp_path / "spark_home"
    (home / "bin").mkdir(parents=True)
    submit = home / "bin" / "spark-submit"
    submit.write_text(f"#!/bin/sh\ntouch {home / 'started'}\nexit 1\n")
    submit.chmod(0o755)
    return home


def _run_with_stand_in(home, *args):
    from conftest import child_env

    env = child_env(SPARK_HOME=str(home))
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return subprocess.run([sys.executable, "-m", "dsha", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env, stdin=subprocess.DEVNULL, check=False)


def _run_without_spark(home, *args):
    out = _run_with_stand_in(home, *args)
    assert not (home / "started").exists(), f"Spark was started before the error: {out.stderr}"
    return out


def _one_error(out, *expected):
    """Exit 2, stdout empty, stderr at most 3 lines whose first is ``dsha: error: ...`` holding ``expected``."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 3, out.stderr
    assert lines[0].startswith("dsha: error: "), out.stderr
    for text in expected:
        assert text in lines[0], (text, out.stderr)
    assert "Traceback" not in out.stderr
    return lines[0]


def test_conf_without_a_value_is_refused_before_spark_starts(data, no_spark):
    out = _run_without_spark(no_spark, "hash", data / "a", "--engine", "spark",
                             "--conf", "spark.sql.shuffle.partitions")
    _one_error(out, "--conf spark.sql.shuffle.partitions", "KEY=VALUE")
    out = _run_without_spark(no_spark, "compare", data / "a", data / "b", "--conf", "=8")
    _one_error(out, "--conf =8", "KEY=VALUE")


@pytest.mark.parametrize("case", ["missing", "empty", "short raw", "short hex", "short base64", "not base64"])
def test_key_files_are_checked_before_spark_starts(data, no_spark, tmp_path, case):
    key = tmp_path / "key"
    content = {"empty": b"", "short raw": os.urandom(15), "short hex": b"00112233445566778899aabbccddee\n",
               "short base64": base64.b64encode(b"k" * 12) + b"\n", "not base64": b"abcde"}
    if case != "missing":
        key.write_bytes(content[case])
    expected = {"missing": ("cannot read the key file", str(key), "No such file"),
                "empty": (str(key), "holds 0 bytes", "at least 16"),
                "short raw": (str(key), "holds 15 bytes", "at least 16"),
                "short hex": (str(key), "hex key of 15 bytes", "at least 16"),
                "short base64": (str(key), "base64 key of 12 bytes", "at least 16"),
                "not base64": (str(key), "neither hex nor base64")}[case]
    out = _run_without_spark(no_spark, "hash", data / "a", "--key-file", key)
    line = _one_error(out, *expected)
    assert "spark.dsha" not in line  # not an internal session setting's length
    out = _run_without_spark(no_spark, "compare", data / "a", data / "b", "--key-file", key)
    _one_error(out, *expected)


def test_a_good_key_file_passes_the_early_check(data, no_spark, tmp_path):
    """The early check accepts what the digest accepts: the same keys reach Spark (here: the stand-in)."""
    for content in (os.urandom(16), os.urandom(32).hex().encode(), base64.urlsafe_b64encode(os.urandom(16))):
        (tmp_path / "key").write_bytes(content)
        out = _run_with_stand_in(no_spark, "hash", data / "a", "--key-file", tmp_path / "key")
        assert (no_spark / "started").exists(), out.stderr
        (no_spark / "started").unlink()


def test_diff_output_that_cannot_be_made_is_refused_before_the_diff(data, no_spark, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    out = _run_without_spark(no_spark, "diff", data / "a", data / "b", "--output", a_file / "sub" / "out")
    _one_error(out, f"--output {a_file / 'sub' / 'out'} cannot be made", f"{a_file} is not a directory")
    out = _run_without_spark(no_spark, "diff", data / "a", data / "b", "--output", data / "a")
    _one_error(out, "exists")


def test_bad_store_paths_are_refused_before_spark_starts(data, no_spark, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for command in ("check", "record"):
        out = _run_without_spark(no_spark, command, "step", data / "a", "--store", a_file)
        _one_error(out, str(a_file))
        out = _run_without_spark(no_spark, command, "step", data / "a", "--store", a_file / "store")
        _one_error(out, str(a_file / "store"))


def test_a_misspelt_column_of_local_files_is_refused_before_spark_starts(data, no_spark):
    """The default engine reads local files' schemas itself: a column typo is said without a JVM start."""
    for args in (("hash", data / "a"), ("compare", data / "a", data / "b"), ("diff", data / "a", data / "b")):
        out = _run_without_spark(no_spark, *args, "--columns", "id,nmae")
        _one_error(out, "no column nmae", "did you mean name?")


def test_table_not_found_is_one_line_with_a_hive_hint_in_a_fresh_process(tmp_path):
    """PySpark 4's query-context logger (a JSON record with the JVM's stack) is silenced; Spark's advice about DROP
    does not apply; a table: input gets the Hive hint."""
    out = run_cli("hash", "table:no_such_table_x", "--engine", "spark", fresh_process=True)
    line = _one_error(out, "no_such_table_x", "spark.sql.catalogImplementation=hive")
    assert "TABLE_OR_VIEW_NOT_FOUND" in line or "Table or view not found" in line
    assert "DROP VIEW IF EXISTS" not in out.stderr
    assert '"ts"' not in out.stderr and "JVM stacktrace" not in out.stderr


def test_table_not_found_in_process(data):
    out = run_cli("compare", "table:no_such_table_y", data / "a")
    line = _one_error(out, "no_such_table_y", "spark.sql.catalogImplementation=hive")
    assert "DROP VIEW IF EXISTS" not in line
    # a Hive catalog asked for: the hint would say nothing new
    out = run_cli("compare", "table:no_such_table_y", data / "a", "--conf", "spark.sql.catalogImplementation=hive")
    assert "hive-site.xml" not in _one_error(out, "no_such_table_y")
    # a path input that is not found: no Hive hint
    out = run_cli("hash", data / "missing")
    assert "Hive" not in _one_error(out, str(data / "missing"))


def test_a_misspelt_table_gets_did_you_mean(spark):
    spark.range(3).createOrReplaceTempView("cli_orders_2024")
    try:
        out = run_cli("hash", "table:cli_order_2024")
    finally:
        spark.catalog.dropTempView("cli_orders_2024")
    _one_error(out, "no table or view cli_order_2024", ": did you mean cli_orders_2024? (a table of a Hive metastore")


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_a_misspelt_column_gets_did_you_mean(spark, data, engine):
    out = run_cli("hash", data / "a", "--engine", engine, "--columns", "id,nmae")
    line = _one_error(out, "no column nmae", "did you mean name?", "columns: id, name, score")
    # with the column spelt as suggested the command runs, and hashes what Spark hashes for those columns
    fixed = run_cli("hash", data / "a", "--engine", engine, "--columns", "id,name")
    assert fixed.returncode == 0, fixed.stderr
    expected = spark.sql(f"SELECT dsha(id, name) FROM parquet.`{data / 'a'}`").first()[0]
    assert fixed.stdout.strip() == expected, line
    # nothing close: no suggestion
    out = run_cli("hash", data / "a", "--engine", engine, "--columns", "zzzzzz")
    assert "did you mean" not in _one_error(out, "no column zzzzzz")
