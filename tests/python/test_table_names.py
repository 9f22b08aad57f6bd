"""A table that is not in the catalog, named where dsha reads it (``table:NAME`` inputs; a Spark Connect
``spark.table(...)``, which Spark reads only when dsha's query runs): one line with the catalog's closest names, by
the matcher of column names (``dsha.core.names``)."""
import os

import pytest
from pyspark.errors import AnalysisException

import dsha
from dsha.errors import TableNotFoundError
from dsha.inputs import Table, load

CONNECT = os.environ.get("DSHA_SPARK_MODE") == "connect"


@pytest.fixture(scope="module")
def views(spark):
    spark.range(3).createOrReplaceTempView("dsha_orders_2024")
    spark.range(2).createOrReplaceTempView("dsha_customers")
    yield
    for name in ("dsha_orders_2024", "dsha_customers"):
        spark.catalog.dropTempView(name)


@pytest.mark.skipif(CONNECT, reason="the catalog's names do not depend on the transport: in the classic pass")
def test_a_table_input_names_the_closest_tables(spark, views):
    with pytest.raises(TableNotFoundError) as e:
        load(spark, Table("dsha_order_2024"))
    assert str(e.value) == ("[TABLE_OR_VIEW_NOT_FOUND] no table or view dsha_order_2024 in the session's catalog: "
                            "did you mean dsha_orders_2024?")
    # what a PySpark user catches for a missing table catches it too; dsha's own name is public
    assert isinstance(e.value, AnalysisException) and isinstance(e.value, LookupError)
    assert dsha.TableNotFoundError is TableNotFoundError and "TableNotFoundError" in dsha.__all__
    assert type(e.value).__name__ == "TableNotFoundError"
    with pytest.raises(TableNotFoundError) as e:
        load(spark, Table("zzzz_nothing_like_it"))
    assert str(e.value) == "[TABLE_OR_VIEW_NOT_FOUND] no table or view zzzz_nothing_like_it in the session's catalog"
    assert load(spark, Table("dsha_customers")).count() == 2


@pytest.mark.skipif(not CONNECT, reason="a classic spark.table(...) fails in pyspark, before dsha is called")
def test_fingerprint_of_a_connect_table_that_is_not_there(spark, views):
    with pytest.raises(AnalysisException, match=r": did you mean dsha_customers\?$") as e:
        dsha.fingerprint(spark.table("dsha_customer"))
    assert isinstance(e.value, TableNotFoundError)
