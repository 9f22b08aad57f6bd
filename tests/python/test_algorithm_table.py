"""Python's one table of algorithms (``dsha.core.algorithms``) is the jar's ``io.dsha.algorithm.Algorithm.all``: the
same ids, multihash codes and combiner state widths, in the same order (as test_spec_names.py holds the function
names to the jar). Read through Py4J: classic sessions only."""
import pytest

from dsha.core.algorithms import ALGORITHMS, BY_CODE, BY_ID, KEYED
from dsha.spark.session import is_connect


def _jar_table(spark):
    if is_connect(spark):
        pytest.skip("reads the jar's table through Py4J (classic sessions)")
    jvm = spark.sparkContext._jvm
    module = getattr(getattr(jvm.io.dsha.algorithm, "Algorithm$"), "MODULE$")
    algorithms = module.all()
    out = []
    for i in range(algorithms.size()):
        a = algorithms.apply(i)
        out.append((a.id(), a.multihashCode(), 8 * a.combiner().words()))
    return out


def test_the_python_table_is_the_jars(spark):
    assert [(a.id, a.code, a.state_bytes) for a in ALGORITHMS] == _jar_table(spark)
    # Each algorithm's SQL functions (its prefix, _fingerprint, _state) give a digest of that algorithm.
    for a in ALGORITHMS:
        key = "'000102030405060708090a0b0c0d0e0f', " if a.keyed else ""
        if a.id == "dsha-keyed-v2":
            continue  # the keyed functions' algorithm comes with the key (test_secure.py); v1 stands for both
        row = spark.sql(f"SELECT {a.sql}({key}id), {a.sql}_fingerprint({key}id).algorithm, "
                        f"dsha_final({a.sql}_state({key}id)) FROM range(3)").first()
        assert row[0] == row[2] and row[1] == a.id, (a.id, tuple(row))


def test_the_python_table_is_consistent():
    assert len(BY_ID) == len(BY_CODE) == len(ALGORITHMS)
    assert KEYED == ("dsha-keyed-v1", "dsha-keyed-v2")
    assert {a.sql for a in ALGORITHMS} == {"dsha", "dsha_keyed", "dsha_secure", "dsha_secure_v2"}
    assert [a.id for a in ALGORITHMS if a.lanes] == ["dsha-secure-v1", "dsha-secure-v2"]
