"""`spark-sql --jars dsha.jar --conf spark.sql.extensions=...` runs dsha from plain SQL, outside Python."""
import os
import subprocess

import pyspark
import pytest

import dsha



@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="independent of the client mode")
def test_spark_sql_shell_runs_dsha(spark, tmp_path):
    jar = dsha.jar_path()  # $DSHA_JAR, else the bundled jar for this pyspark
    spark_home = os.path.dirname(pyspark.__file__)
    env = dict(os.environ, SPARK_HOME=spark_home)
    out = subprocess.run(
        [os.path.join(spark_home, "bin", "spark-sql"), "--master", "local[2]", "--jars", jar,
         "--conf", "spark.sql.extensions=io.dsha.registration.DshaExtensions", "--conf", "spark.ui.enabled=false",
         "-e", "SELECT dsha(*) FROM range(1000); SELECT logical_hash(map(1,2,3,4)) = logical_hash(map(3,4,1,2));"],
        # in a directory of its own: the shell creates its Hive metastore (metastore_db/, Derby: one process at a
        # time), derby.log and spark-warehouse/ in the working directory
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split()
    expected = spark.sql("SELECT dsha(*) FROM range(1000)").first()[0]
    assert lines == [expected, "true"]
