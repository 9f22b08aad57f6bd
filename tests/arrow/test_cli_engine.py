"""`dsha hash|compare --engine arrow|auto` without pyspark: the Arrow engine answers, no JVM starts, and what needs
Spark is a one-line error (exit 2) saying so."""
import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha.arrow

NO_SPARK = pytest.mark.skipif(
    __import__("importlib").util.find_spec("pyspark") is not None, reason="checks the CLI where pyspark is missing")


def run_cli(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    package_root = os.path.dirname(os.path.dirname(dsha.arrow.__file__))  # the dsha this test imports
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(package_root)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return subprocess.run([sys.executable, "-m", "dsha", *args], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    table = pa.table({"id": pa.array(range(100), pa.int64()), "Name": pa.array([f"n{i}" for i in range(100)]),
                      "score": pa.array([i * 0.5 for i in range(100)])})
    (root / "a").mkdir()
    pq.write_table(table.slice(0, 60), root / "a" / "part-0.parquet")
    pq.write_table(table.slice(60), root / "a" / "part-1.parquet")
    pq.write_table(table.sort_by([("score", "descending")]), root / "b.parquet", compression="zstd")
    pq.write_table(table.slice(1), root / "fewer.parquet")
    return root, table


def test_hash_with_the_arrow_engine(files):
    root, table = files
    out = run_cli("hash", str(root / "a"), "--engine", "arrow")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == dsha.arrow.fingerprint(table).digest
    assert "rows: 100" in out.stderr and "engine: arrow" in out.stderr
    js = json.loads(run_cli("hash", str(root / "b.parquet"), "--engine", "arrow", "--json").stdout)
    assert js["digest"] == out.stdout.strip() and js["rows"] == 100 and js["engine"] == "arrow"


def test_columns_resolve_case_insensitively_as_in_spark(files):
    root, table = files
    out = run_cli("hash", str(root / "a"), "--engine", "arrow", "--columns", "name,ID")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == dsha.arrow.fingerprint(table.select(["id", "Name"])).digest
    missing = run_cli("hash", str(root / "a"), "--engine", "arrow", "--columns", "nope")
    assert missing.returncode == 2 and "no column nope" in missing.stderr and "Name" in missing.stderr


def test_compare_exit_codes(files):
    root, _ = files
    same = run_cli("compare", str(root / "a"), str(root / "b.parquet"), "--engine", "arrow")
    assert same.returncode == 0, same.stderr
    assert "equal" in same.stdout and "engine: arrow" in same.stderr
    different = run_cli("compare", str(root / "a"), str(root / "fewer.parquet"), "--engine", "arrow", "--json")
    assert different.returncode == 1, different.stderr
    assert json.loads(different.stdout)["reason"] == "row count"


@NO_SPARK
def test_auto_uses_arrow_without_pyspark_and_says_what_needs_spark(files):
    root, table = files
    out = run_cli("hash", str(root / "a"))
    assert out.returncode == 0 and "engine: arrow" in out.stderr, out.stderr
    assert out.stdout.strip() == dsha.arrow.fingerprint(table).digest
    for args, needed in [(["hash", "--table", "t"], "--table"), (["hash", str(root / "a"), "--state", "s.json"], "--state"),
                         (["hash", str(root / "a"), "--engine", "spark"], "pyspark")]:
        err = run_cli(*args)
        assert err.returncode == 2, (args, err.stderr)
        lines = err.stderr.strip().splitlines()
        assert len(lines) == 1 and needed in lines[0], (args, err.stderr)


@NO_SPARK
def test_version_names_the_arrow_engine_and_what_to_install_for_spark():
    import numpy

    out = run_cli("--version")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("dsha ") and lines[1].startswith("algorithm: ")
    assert 'spark: not installed (pip install "pyspark<5,>=3.5")' in lines
    assert f"arrow: pyarrow {pa.__version__}, numpy {numpy.__version__}" in lines
    assert lines[-1] == "engines: arrow"
    assert "No module named" not in out.stdout + out.stderr and not any(line.startswith("jar:") for line in lines)


@NO_SPARK
def test_check_and_record_without_pyspark(files, tmp_path):
    """`dsha record` / `dsha check` of local Parquet run on the Arrow engine: a consumer with `[arrow]` alone gates a
    step; what needs Spark is one line naming it and what to install."""
    root, table = files
    data, store = tmp_path / "data", str(tmp_path / "store")
    data.mkdir()
    pq.write_table(table.slice(0, 70), data / "part-0.parquet")
    recorded = run_cli("record", "step", str(data), "--store", store, "--create-store", "--json")
    assert recorded.returncode == 0, recorded.stderr
    digest = json.loads(recorded.stdout)["inputs"][str(data)]["digest"]
    assert digest == dsha.arrow.fingerprint(table.slice(0, 70)).digest
    assert recorded.stderr.strip() == f"recorded step in {store}"
    same = run_cli("check", "step", str(data), "--store", store)
    assert same.returncode == 0 and same.stdout.startswith("unchanged since 20"), same.stderr
    pq.write_table(table.slice(70), data / "part-1.parquet")  # 30 more rows
    changed = run_cli("check", "step", str(data), "--store", store, "--json")
    assert changed.returncode == 1, changed.stderr
    assert json.loads(changed.stdout)["changes"] == [{"input": str(data), "what": "row count",
                                                      "detail": "70 -> 100 rows"}]
    for args, needed in [(["--approximate"], "--approximate needs the Spark engine"),
                         (["--engine", "spark"], "the Spark engine was asked for"),
                         (["--store", "table:db.records"], "the Arrow engine keeps a local store")]:
        err = run_cli("check", "step", str(data), "--store", store, *args)
        lines = err.stderr.strip().splitlines()
        assert err.returncode == 2 and len(lines) == 1, (args, err.stderr)
        assert needed in lines[0] and 'pip install "pyspark' in lines[0], (args, lines)


@NO_SPARK
def test_check_reads_exactly_the_files_named_whatever_their_names(files, tmp_path):
    """The Arrow check path under odd names and sidecars: a file named like a pattern beside the file it would match,
    spaces, '%', '#' and Unicode, a README beside the data (left out, with a note), and a mixed directory (refused,
    exit 2, before anything is recorded)."""
    root, table = files
    data, store = tmp_path / "d a%41#ü", str(tmp_path / "store")
    data.mkdir()
    pq.write_table(table.slice(0, 10), data / "x1.parquet")
    pq.write_table(table.slice(10, 30), data / "x[1].parquet")
    pq.write_table(table.slice(40, 5), data / "x?.parquet")
    (data / "README.txt").write_text("not data")
    recorded = run_cli("record", "step", str(data), "--store", store, "--create-store", "--json")
    assert recorded.returncode == 0, recorded.stderr
    out = json.loads(recorded.stdout)["inputs"][str(data)]
    whole = pa.concat_tables([table.slice(0, 10), table.slice(10, 30), table.slice(40, 5)])
    assert (out["digest"], out["rows"]) == (dsha.arrow.fingerprint(whole).digest, 45)
    assert "README.txt" in recorded.stderr and "not reading" in recorded.stderr
    pq.write_table(table.slice(10, 29), data / "x[1].parquet")  # the pattern-named file loses a row
    changed = run_cli("check", "step", str(data), "--store", store, "--json")
    assert changed.returncode == 1, changed.stderr
    assert json.loads(changed.stdout)["changes"][0]["detail"] == "45 -> 44 rows"
    (data / "extra.csv").write_text("id\n1\n")
    mixed = run_cli("check", "step", str(data), "--store", store)
    lines = mixed.stderr.strip().splitlines()
    assert mixed.returncode == 2 and len(lines) == 1, mixed.stderr
    assert "mixes formats: parquet (3 files" in lines[0] and "csv (1 file: extra.csv)" in lines[0], lines
