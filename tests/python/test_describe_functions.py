"""What DESCRIBE FUNCTION EXTENDED says about each dsha SQL function, held to SPEC.md (issue 34, item 10): the facts a
description states (cell sizes, which algorithm a function computes, how a key is written, the digests of its
examples) must be the ones SPEC defines and the jar does. The example digests are computed here by the independent
reference (tests/reference), not by Spark. Classic sessions only: the texts come from the jar, whatever the transport.
"""
import os
import re
import struct
import sys

import pytest

from dsha.spark.session import FUNCTIONS
from spark_conf import sql_conf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import dsha_reference as ref  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the descriptions are the jar's: one transport checks them")

KEYED = ("dsha_keyed", "dsha_keyed_fingerprint", "dsha_keyed_state")


@pytest.fixture(scope="module")
def described(spark):
    """{function: its DESCRIBE FUNCTION EXTENDED text}, one query per function."""
    return {f: "\n".join(r[0] for r in spark.sql(f"DESCRIBE FUNCTION EXTENDED {f}").collect()) for f in FUNCTIONS}


def _flat(text):
    """The text with its line breaks and indentation as single spaces (descriptions wrap anywhere)."""
    return re.sub(r"\s+", " ", text)


def test_every_function_is_described(described):
    for f, text in described.items():
        assert f"Function: {f}" in text and "Usage:" in text, f
        assert "Examples:" in text and ">" in text, f"{f} has no example"


def _sketch_bytes(spark, cells=None):
    settings = {"spark.dsha.sketch.columnDigests": "false"}
    if cells is not None:
        settings["spark.dsha.sketch.cells"] = cells
    with sql_conf(spark, settings):
        return bytes(spark.sql("SELECT dsha_sketch(*) FROM VALUES (1) AS t(x)").first()[0])


def _cell_count(sketch):
    """m of SPEC §17.1: after magic (4), version (1), algorithm varint (4), schema digest (u32 + 32), rows (8), sum (16)."""
    assert sketch[:4] == b"DSHK" and sketch[5:9] == bytes.fromhex("81b4f501")
    return struct.unpack_from("<I", sketch, 4 + 1 + 4 + 4 + 32 + 8 + 16)[0]


def test_dsha_sketch_states_the_cell_size_and_default_of_what_it_writes(spark, described):
    """SPEC §17.1: format version 2 has 48-byte cells (version 1: 40). The description's 'default N, B bytes each'
    must be the default cell count and the cell size of the sketches dsha_sketch writes."""
    stated = re.search(r"default (\d+), (\d+) bytes each", _flat(described["dsha_sketch"]))
    assert stated, "dsha_sketch's description states the default cell count and the bytes per cell"
    one, two = _sketch_bytes(spark, 1), _sketch_bytes(spark, 2)
    assert one[4] == two[4] == 2  # format version 2 (SPEC §17.1)
    cell_bytes = len(two) - len(one)
    assert cell_bytes == 48
    default = _sketch_bytes(spark)
    assert (int(stated.group(1)), int(stated.group(2))) == (_cell_count(default), cell_bytes)


@pytest.mark.parametrize("function", KEYED)
def test_keyed_functions_say_which_keyed_algorithm_they_compute(described, function):
    """SPEC §16.6: a keyed function computes dsha-keyed-v2 when its key reference names it (conf:NAME#ALGORITHM) or
    spark.dsha.keyed.algorithm does, else dsha-keyed-v1: a description naming only dsha-keyed-v1 is wrong half the
    time."""
    text = _flat(described[function])
    assert "dsha-keyed-v1" in text and "dsha-keyed-v2" in text, function


def test_dsha_keyed_states_every_spelling_of_its_key(described):
    """SPEC §16.2: BINARY, hex, base64, conf:NAME and conf:NAME#ALGORITHM."""
    text = _flat(described["dsha_keyed"])
    for spelling in ("BINARY", "hex", "base64", "conf:NAME", "#ALGORITHM"):
        assert spelling in text, spelling


def test_example_digests_are_the_references(described):
    """The digests shown in the examples are SPEC's: computed by the reference from the example's table."""
    dsha_example = ref.table_digest('struct<"id":int,"name":string>', [{"id": 1, "name": "a"},
                                                                      {"id": 2, "name": "b"}])["digest"]
    assert dsha_example in described["dsha"]
    assert dsha_example in described["dsha_final"]
    row = ref.row_digest('struct<"_1":int,"_2":string>', {"_1": 1, "_2": "a"}).hex().upper()
    assert "hex(logical_hash(1, 'a'));" in _flat(described["logical_hash"]) and row in described["logical_hash"]
    assert f"logical_hash_in(X'{row}', 1, 'a');" in _flat(described["logical_hash_in"])
    x1, x3 = (ref.row_digest('struct<"x":int>', {"x": x}).hex().upper() for x in (1, 3))
    shown = re.search(r"concat\(X'([0-9A-F]{32})', X'([0-9A-F]{32})'\), x\)", described["logical_hash_in"])
    assert shown and set(shown.groups()) == {x1, x3}  # ... and its rows are 1 and 3
    assert re.search(r"\n\s*1\n\s*3\n", described["logical_hash_in"])


def test_state_and_digest_prefixes_are_specs(described):
    """SPEC §11.1 (magic, format version, algorithm varint) and §6/§16 (digest string prefixes)."""
    state_prefix = (b"DSHS" + b"\x01" + ref.varint(0x3D5A01)).hex().upper()
    assert state_prefix in described["dsha_state"]
    assert "f90b4f50120" in described["dsha_keyed"]  # dsha-keyed-v1 under the session's default
    assert "fa0b4f50120" in described["dsha_secure"]


def test_argument_naming_is_specs(described):
    """SPEC §2.1: other expressions are named _N by position (among the columns: a keyed function's key, and the
    digests or words of logical_hash_in and logical_filter_word_in, are not counted)."""
    assert "_1, _2" in _flat(described["logical_hash"])
    for f in ("logical_hash_in", "logical_filter_word_in"):
        assert "as in logical_hash" in _flat(described[f]), f
