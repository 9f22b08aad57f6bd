"""The wheel carries the jar: installed on its own (outside the repository), it runs dsha with no download."""
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="packaging does not depend on the client mode; Connect is covered below")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    os.path.join(REPO, "python"), "-w", str(root / "dist")], check=True, timeout=300)
    wheel = next((root / "dist").glob("dsha-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, timeout=300)
    return names, target


def test_wheel_contains_the_jar_and_the_cli(installed):
    names, target = installed
    assert any(n.startswith("dsha/jars/dsha-") and n.endswith(".jar") for n in names), names
    assert "dsha/cli.py" in names and "dsha/log4j2-cli.properties" in names
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
