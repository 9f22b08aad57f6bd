"""The wheel carries the jar: installed on its own (outside the repository), it runs dsha with no download."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

import dsha

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="packaging does not depend on the client mode; Connect is covered below")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    # Built from a copy of python/ and build.sbt (where setup.py reads the version), as another suite may be building
    # the same checkout at the same time; the build writes nothing into it (setup.py: setuptools' build/ and egg-info
    # go to a temporary directory), so a read-only checkout installs.
    source = root / "source"
    shutil.copytree(os.path.join(REPO, "python"), source / "python",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".mypy_cache", ".ruff_cache"))
    shutil.copy(os.path.join(REPO, "build.sbt"), source / "build.sbt")
    before = sorted(p.name for p in (source / "python").iterdir())
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    str(source / "python"), "-w", str(root / "dist")], check=True, timeout=300)
    assert sorted(p.name for p in (source / "python").iterdir()) == before, "the build wrote into the source tree"
    wheel = next((root / "dist").glob("dsha-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, timeout=300)
    return names, target


def test_wheel_contains_the_jar_and_the_cli(installed):
    names, target = installed
    jars = sorted(n for n in names if n.startswith("dsha/jars/dsha-spark") and n.endswith(".jar"))
    with open(os.path.join(REPO, "dev", "spark-lines"), encoding="utf-8") as f:  # every Spark line's jar
        rows = [line.split() for line in f if line.strip() and not line.startswith("#")]
    assert [n.split("/")[-1].rsplit("-", 1)[0] for n in jars] == sorted(f"dsha-spark{r[0]}_{r[1]}" for r in rows), names
    assert "dsha/cli/__init__.py" in names and "dsha/log4j2-cli.properties" in names
    assert any(n.endswith("entry_points.txt") for n in names)


@pytest.mark.parametrize("mode", ["classic", "connect"])
def test_installed_package_works_in_a_fresh_process(installed, mode):
    _, target = installed
    builder = 'SparkSession.builder.remote("local[1]")' if mode == "connect" else \
        'SparkSession.builder.master("local[1]")'
    script = textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        import dsha
        from dsha.functions import dsha as dsha_agg
        assert dsha.__file__.startswith({str(target)!r}), dsha.__file__
        assert dsha.jar_path().startswith({str(target)!r}), dsha.jar_path()
        spark = dsha.configure({builder}).getOrCreate()
        print(spark.range(10).agg(dsha_agg("*")).first()[0])
    """)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_", "DSHA_JAR", "PYSPARK_SUBMIT"))}
    env["PYTHONPATH"] = str(target)
    env["SPARK_TESTING"] = "1"  # a local Spark Connect server on an ephemeral port, not 15002 (shared machines)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env,
                         cwd=str(target))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1].startswith("f81b4f50120")
    # the jar and the extension were taken at the local Connect server's start: no warning that they were not
    assert not re.search(r"(Failed to set|Cannot modify the value of).*spark\.(jars|sql\.extensions)\b", out.stderr), \
        out.stderr[-3000:]


# One source for each fact: the Python side names the extension class and the SQL functions once (dsha._session);
# these tests hold them to the jar's own answer.

def test_function_names_agree_with_the_jar(spark):
    from dsha.spark.session import FUNCTIONS

    names = spark._jvm.io.dsha.registration.DshaFunctions.names()  # noqa: SLF001 (py4j, classic session)
    assert tuple(names.mkString("\n").split("\n")) == FUNCTIONS


def test_extension_class_loads_and_registers_the_functions(spark):
    from py4j.java_gateway import JavaClass

    from dsha.spark.session import EXTENSION_CLASS, FUNCTIONS

    cls = spark._jvm  # noqa: SLF001
    for part in EXTENSION_CLASS.split("."):
        cls = getattr(cls, part)
    assert isinstance(cls, JavaClass), f"{EXTENSION_CLASS} does not load from {dsha.jar_path()}"
    cls()  # a SparkSessionExtensions => Unit, instantiated by Spark with its no-argument constructor
    assert EXTENSION_CLASS in spark.conf.get("spark.sql.extensions")
    assert all(spark.catalog.functionExists(f) for f in FUNCTIONS)


def test_version_has_one_source():
    """dsha.__version__ (package metadata, written by setup.py) is build.sbt's version, which names the jars."""
    import re

    with open(os.path.join(REPO, "build.sbt"), encoding="utf-8") as f:
        version = re.search(r'^ThisBuild / version := "([^"]+)"', f.read(), re.M).group(1)
    assert dsha.__version__ == version
    assert os.path.basename(dsha.jar_path()).endswith(f"-{version}.jar") or os.environ.get("DSHA_JAR")


def test_jar_matches_the_installed_spark(spark):
    from dsha.spark.session import spark_line, spark_runtime

    version, scala = spark_runtime()
    assert version == spark.version
    name = os.path.basename(dsha.jar_path())
    if not os.environ.get("DSHA_JAR"):
        assert name.startswith(f"dsha-spark{spark_line(version)}_{scala}-"), name


def test_cli_version():
    out = subprocess.run([sys.executable, "-m", "dsha", "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"dsha {dsha.__version__}"
    assert "algorithm: dsha-v1" in lines
    assert any(line.startswith("spark: ") and "Scala 2.1" in line for line in lines), lines
    assert any(line.startswith("jar: ") and line.endswith((".jar", "(from DSHA_JAR)")) for line in lines), lines
    assert out.stderr == ""


@pytest.mark.parametrize("core, expected", [
    ("spark-core_2.12-3.5.0.jar", "dsha-spark3.5_2.12-"),   # pyspark 3.5, Databricks 14.3/15.4 LTS
    ("spark-core_2.13-3.5.2.jar", "dsha-spark3.5_2.13-"),   # a Spark 3.5 distribution for Scala 2.13
    ("spark-core_2.13-4.1.0.jar", "dsha-spark4_2.13-"),
    ("spark-core_2.12-3.4.1.jar", None),                    # no jar: the error names the supported lines
    ("spark-core_2.13-5.0.0.jar", None),
])
def test_jar_for_each_spark_home(monkeypatch, tmp_path, core, expected):
    (tmp_path / "jars").mkdir()
    (tmp_path / "jars" / core).touch()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    monkeypatch.delenv("DSHA_JAR", raising=False)
    if expected:
        assert os.path.basename(dsha.jar_path()).startswith(expected)
    else:
        with pytest.raises(dsha.UnsupportedSparkError, match=r"it supports Spark 3\.5 \(Scala 2\.12, 2\.13\); "
                                                             r"Spark 4\.x \(Scala 2\.13\)"):
            dsha.jar_path()
