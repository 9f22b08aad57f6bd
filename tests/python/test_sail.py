"""The jar-free path on Sail (pysail: a Spark Connect server in Rust, no JVM, no jar can run there): dsha.fingerprint,
equal and state give the jar's digests, computed by this suite's session with the jar on the same rows.

Runs where pysail is installed (dev/python-env puts it in the environment of the line whose smoke step runs this
file: python/requirements-sail.txt)."""
import random
import warnings

import pytest

pysail = pytest.importorskip("pysail.spark")
pytest.importorskip("pyarrow")
from pyspark.sql.connect.session import SparkSession as RemoteSession  # noqa: E402  (beside the classic one)
from pyspark.sql.types import LongType, StringType, StructField, StructType  # noqa: E402

import dsha  # noqa: E402
from conftest import MODE  # noqa: E402
from test_arrow_agreement import _schema, _value  # noqa: E402

pytestmark = pytest.mark.skipif(MODE == "connect", reason="the expected digests come from the classic session")


@pytest.fixture(scope="module")
def sail():
    server = pysail.SparkConnectServer()
    server.start()
    _, port = server.listening_address
    session = RemoteSession.builder.remote(f"sc://localhost:{port}").getOrCreate()
    yield session
    session.stop()
    server.stop()


def test_random_nested_tables_give_the_jars_digests(spark, sail):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(12):
            rnd = random.Random(5000 + i)
            schema = _schema(rnd)
            rows = [tuple(_value(rnd, f.dataType) for f in schema.fields) for _ in range(rnd.randint(0, 40))]
            expected = dsha.fingerprint(spark.createDataFrame(rows, schema))
            got = dsha.fingerprint(sail.createDataFrame(rows, schema))
            assert got == expected, (i, schema.simpleString())
    notes = [str(w.message) for w in caught if issubclass(w.category, dsha.DshaWarning)]
    assert len(notes) == 1 and "computed by Python on the executors" in notes[0], notes


def test_equal_state_and_merge(spark, sail):
    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    rows = [(i, f"n{i % 7}") for i in range(500)]
    left = sail.createDataFrame(rows, schema)
    assert dsha.equal(left, sail.createDataFrame(list(reversed(rows)), schema))
    different = dsha.equal(left, sail.createDataFrame(rows[1:], schema))
    assert not different and different.reason == "row count"
    halves = [dsha.state(sail.createDataFrame(part, schema)) for part in (rows[:200], rows[200:])]
    assert dsha.merge(halves) == dsha.state(spark.createDataFrame(rows, schema))
