"""The `dsha` command line: output, exit codes (0 equal, 1 different, 2 error) and one-line errors."""
import json
import os
import subprocess
import sys

import pytest
from cli_runner import run_cli

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI starts its own embedded Spark; run once")


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    df = spark.createDataFrame([(i, f"name{i}", i * 1.5) for i in range(50)], "id INT, name STRING, score DOUBLE")
    df.repartition(3).write.parquet(str(root / "a"))
    df.orderBy("name").coalesce(1).write.option("compression", "zstd").parquet(str(root / "b"))
    df.where("id != 7").write.parquet(str(root / "fewer"))
    df.write.orc(str(root / "a_orc"))
    good = next(p for p in os.listdir(root / "b") if p.endswith(".parquet"))
    data = (root / "b" / good).read_bytes()
    (root / "broken").mkdir()
    (root / "broken" / "part-0.parquet").write_bytes(data[: len(data) // 2])
    return root, spark.sql(f"SELECT dsha(*) FROM parquet.`{root / 'a'}`").first()[0]


def test_hash_prints_the_digest(tables):
    root, expected = tables
    out = run_cli("hash", str(root / "a"), fresh_process=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
    # stderr: the summary lines only, no JVM start-up warnings (e.g. Spark 4.1+ "WARNING: Using incubator modules")
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and "rows: 50" in lines[0], out.stderr
    assert lines[1].startswith("files: 3, read 3, reused 0 (no manifest)"), out.stderr


def test_hash_json_and_format_inference(tables):
    root, expected = tables
    out = run_cli("hash", str(root / "a_orc"), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["digest"] == expected and result["rows"] == 50 and result["algorithm"] == "dsha-v1"


def test_compare_equal_and_different(tables):
    root, _ = tables
    same = run_cli("compare", str(root / "a" / "part-*"), str(root / "b"), "--quiet")  # a glob, a directory
    assert same.returncode == 0, same.stderr
    assert "equal" in same.stdout
    different = run_cli("compare", str(root / "a"), str(root / "fewer"), "--quiet")
    assert different.returncode == 1, different.stderr
    assert "row counts differ: 50 vs 49" in different.stdout
    # Column names resolve as in Spark (case-insensitively).
    columns = run_cli("compare", str(root / "a"), str(root / "fewer"), "--columns", "NAME", "--json")
    assert columns.returncode == 1 and json.loads(columns.stdout)["reason"] == "row count"


@pytest.mark.parametrize("case", ["missing", "corrupt", "column"])
def test_errors_exit_2_with_one_clear_line(tables, case):
    root, _ = tables
    args = {"missing": ["hash", str(root / "nope")],
            "corrupt": ["hash", str(root / "broken")],
            "column": ["hash", str(root / "a"), "--columns", "id,nope"]}[case]
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""  # never a partial digest
    errors = [line for line in out.stderr.splitlines() if line.startswith("dsha: error:")]
    assert len(errors) == 1, out.stderr[-3000:]
    assert "Traceback" not in out.stderr and "\tat org.apache" not in out.stderr
    expected = {"missing": "no such file or directory", "corrupt": "broken", "column": "no column nope"}[case]
    assert expected in errors[0]


def test_format_inference(tmp_path):
    from dsha.core.paths import format_of as _format_of

    (tmp_path / "t" / "year=2024" / "month=1").mkdir(parents=True)
    (tmp_path / "t" / "_SUCCESS").write_text("")
    (tmp_path / "t" / "year=2024" / "month=1" / "part-0.orc").write_text("")
    (tmp_path / "d" / "_delta_log").mkdir(parents=True)
    (tmp_path / "d" / "part-0.parquet").write_text("")
    (tmp_path / "events.json.gz").write_text("")
    (tmp_path / "empty").mkdir()
    assert _format_of(str(tmp_path / "t"), None) == "orc"  # partitioned: the files in key=value folders
    assert _format_of(str(tmp_path / "d"), None) == "delta"
    assert _format_of(str(tmp_path / "events.json.gz"), None) == "json"
    assert _format_of("file:" + str(tmp_path / "x.csv"), None) == "csv"
    assert _format_of(str(tmp_path / "*.csv"), None) == "csv"
    assert _format_of(str(tmp_path / "empty"), None) == "parquet"
    assert _format_of("s3a://bucket/table", None) == "parquet"
    assert _format_of(str(tmp_path / "t"), "JSON") == "json"


def test_short_error_is_one_line():
    from dsha.cli.output import short_error as _short_error

    e = Exception("An error occurred while calling o52.first.\n: org.apache.spark.SparkException: "
                  "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file\nfile:/x/part-0.parquet. "
                  "SQLSTATE: KD001; 'Relation [a]\n\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFile(x.scala)")
    assert _short_error(e) == ("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
                               "file:/x/part-0.parquet. SQLSTATE: KD001")
    assert _short_error(Exception("java.io.IOException: disk full\n\tat a.b(c)")) == "disk full"
    assert len(_short_error(Exception("x" * 2000))) == 500


def test_usage_errors_need_no_spark(tmp_path):
    out = run_cli("compare", str(tmp_path / "missing"), str(tmp_path), fresh_process=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines()[-1] == f"dsha: error: no such file or directory: {tmp_path / 'missing'}"
    out = run_cli("hash", str(tmp_path / "*.parquet"), fresh_process=True)
    assert out.returncode == 2 and "no file matches" in out.stderr
    out = run_cli("hash", fresh_process=True)
    assert out.returncode == 2 and "give a PATH or --table NAME" in out.stderr


def test_engine_auto_picks_arrow_for_local_parquet_and_both_agree(tables):
    """Without --master or --conf, `dsha hash DIR` of Parquet runs on the Arrow engine (no JVM) and prints the digest
    Spark computes; --engine spark and --engine arrow agree on Parquet and ORC."""
    pytest.importorskip("pyarrow")
    root, expected = tables
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_"))}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    auto = subprocess.run([sys.executable, "-m", "dsha", "hash", str(root / "a"), "--json"], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["engine"] == "arrow" and json.loads(auto.stdout)["digest"] == expected
    spark_run = run_cli("hash", str(root / "a_orc"), "--engine", "spark", "--json")
    assert json.loads(spark_run.stdout)["engine"] == "spark" and json.loads(spark_run.stdout)["digest"] == expected
    arrow_run = run_cli("compare", str(root / "a_orc"), str(root / "b"), "--engine", "arrow")
    assert arrow_run.returncode == 0 and "engine: arrow" in arrow_run.stderr, arrow_run.stderr
