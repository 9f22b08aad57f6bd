"""The hints the CLI appends to an error line name settings that work for the Spark that runs."""
import pyspark

from dsha._delta_versions import delta_for_spark
from dsha.cli.output import hint


def test_delta_hint_names_the_release_for_this_spark_and_every_setting_delta_needs():
    error = RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: delta. SQLSTATE: 42K02")
    text = hint(error)
    release = delta_for_spark(pyspark.__version__)
    if release is None:  # Spark 4.3: no Delta release yet; the hint says which one is needed instead of a wrong one
        assert f"<the delta-spark release for Spark {pyspark.__version__}>" in text
    else:
        assert f"spark.jars.packages={release.maven_coordinate} " in text
    assert "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension" in text
    assert "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog" in text
    assert "VERSION" not in text


def test_no_hint_for_other_errors():
    assert hint(RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: avro.")) == ""
