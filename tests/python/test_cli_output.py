"""What the `dsha` command line tells a person besides the digest: `record` says what it recorded and where,
`hash --no-cache` says that it did not use the manifest there, `--version` names each engine and its versions, and
the engine `auto` picks is one that can run (not the Arrow engine without numpy)."""
import importlib.metadata
import json
import os

import pyspark
import pytest
from cli_runner import run_cli

import dsha
import dsha.dependencies
from dsha.cli import engine
from dsha.cli.parser import parser, version_text
from dsha.store import open_store

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI is tested in the classic pass")


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_output")
    df = spark.createDataFrame([(i, f"n{i}") for i in range(30)], "id INT, name STRING")
    df.repartition(2).write.parquet(str(root / "t"))
    df.write.parquet(str(root / "u"))  # never given a manifest
    return root, spark.read.parquet(str(root / "t"))


def test_record_says_what_it_recorded_in_which_store(data, tmp_path):
    root, df = data
    store = str(tmp_path / "store")
    out = run_cli("record", "daily_report", root / "t", "--store", store, "--create-store")
    assert out.returncode == 0, out.stderr
    assert f"recorded daily_report in {store}" in out.stderr.splitlines()
    # what it says it recorded is in the store, under that name, with the digest of the data
    entry = open_store(store).latest("daily_report")
    assert entry is not None
    assert [i.fingerprint.digest for i in entry.inputs.values()] == [dsha.fingerprint(df).digest]
    assert out.stdout.split()[0] == dsha.fingerprint(df).digest
    # also with --json (stdout stays one JSON document)
    out = run_cli("record", "daily_report", root / "t", "--store", store, "--json")
    assert json.loads(out.stdout)["name"] == "daily_report"
    assert f"recorded daily_report in {store}" in out.stderr.splitlines()


def test_no_cache_on_a_directory_with_a_manifest_says_it_was_not_used(data):
    root, df = data
    made = run_cli("hash", root / "t", "--engine", "spark", "--update-manifest")
    assert made.returncode == 0, made.stderr
    assert os.path.isfile(root / "t" / "_dsha" / "manifest.json")
    reused = run_cli("hash", root / "t", "--engine", "spark")
    assert "reused 2 (states from" in reused.stderr, reused.stderr
    fresh = run_cli("hash", root / "t", "--engine", "spark", "--no-cache")
    assert fresh.returncode == 0, fresh.stderr
    files_line = next(line for line in fresh.stderr.splitlines() if line.startswith("files: "))
    assert files_line == "files: 2, read 2, reused 0 (cache not used: --no-cache)", fresh.stderr
    assert fresh.stdout.strip() == reused.stdout.strip() == dsha.fingerprint(df).digest


def test_version_names_each_engine_and_its_versions():
    lines = version_text().splitlines()
    assert lines[0] == f"dsha {dsha.__version__}"
    spark_line = next(line for line in lines if line.startswith("spark: "))
    assert f"pyspark {pyspark.__version__}" in spark_line and "Scala 2.1" in spark_line
    assert any(line.startswith("jar: ") and line.endswith((".jar", "(from DSHA_JAR)")) for line in lines), lines
    import numpy
    import pyarrow

    assert f"arrow: pyarrow {pyarrow.__version__}, numpy {numpy.__version__}" in lines
    assert lines[-1] == "engines: spark, arrow"
    assert not any("No module named" in line for line in lines)


def test_version_without_numpy_says_what_to_install(monkeypatch):
    monkeypatch.setattr(dsha.dependencies, "installed", lambda m: m != "numpy")
    import dsha.cli.parser as cli_parser

    monkeypatch.setattr(cli_parser, "installed", lambda m: m != "numpy")
    lines = version_text().splitlines()
    # the packages themselves: `dsha[arrow]` would make pip look dsha up on PyPI, where that name is not ours
    assert 'arrow: not installed: no numpy (pip install "pyarrow>=15" "numpy>=1.23" "cryptography>=3.1")' in lines
    assert lines[-1] == "engines: spark"


def test_auto_does_not_pick_the_arrow_engine_without_numpy(data, monkeypatch):
    """pyspark and pyarrow installed, numpy not (pyarrow alone comes with other packages): `auto` runs Spark."""
    root, df = data
    args = parser().parse_args(["hash", str(root / "u")])
    assert engine.choose(args) == "arrow"  # everything installed: local Parquet goes to the Arrow engine
    monkeypatch.setattr(dsha.dependencies, "installed", lambda m: m != "numpy")
    assert engine.choose(args) == "spark"
    out = run_cli("hash", root / "u")
    assert out.returncode == 0, out.stderr
    assert "engine: spark" in out.stderr and "numpy" not in out.stderr
    assert out.stdout.strip() == dsha.fingerprint(df).digest
    # asked for by name, the Arrow engine says what to install
    out = run_cli("hash", root / "u", "--engine", "arrow")
    assert out.returncode == 2
    assert out.stderr.strip() == 'dsha: error: --engine arrow needs pyarrow and numpy: pip install "pyarrow>=15" "numpy>=1.23" "cryptography>=3.1"'


def test_version_of_falls_back_to_the_module(monkeypatch):
    """pyspark from a Spark distribution's python/ folder has no package metadata: its __version__ is used."""
    from dsha.cli import parser as cli_parser

    def no_metadata(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", no_metadata)
    assert cli_parser._version_of("pyspark") == pyspark.__version__
