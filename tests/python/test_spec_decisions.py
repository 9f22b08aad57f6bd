"""SPEC.md points an implementation written from the spec alone had to guess (issue 34, item 10), checked against what
the jar does: key spellings (§16.2), the keyed algorithm named with a key (§16.6), a row count of 2^63 or more in a
fingerprint (§6, §11.1), state lengths of every algorithm (§11.2), manifests in Hadoop's spelling and in any order
(§12.1, §12.3), variant objects in the secure encoding (§16.1), user-defined types in sketches (§17.2.1),
subtracting sketches with and without column digests (§17.3) and the estimate of a difference that does not decode
(§17.4). The expected values come from the independent reference (tests/reference). Classic sessions only: none of
this depends on the transport."""
import base64
import json
import os
import struct
import sys

import pytest
from pyspark.sql import Row
from pyspark.sql import types as T

from spark_conf import sql_conf

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import dsha_reference as ref  # noqa: E402
import dsha_reference_secure as sec  # noqa: E402
import dsha_reference_sketch as sk  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the jar's decisions, whatever the transport")

HEX64 = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef"  # 32 bytes


def keyed(spark, key_sql, table="SELECT 1 AS a"):
    return spark.sql(f"SELECT dsha_keyed({key_sql}, *) AS d FROM ({table})").first().d


def by_bytes(key: bytes):
    """The dsha-keyed-v1 digest of `SELECT 1 AS a` under the key as bytes, by the reference."""
    return sec.keyed_digest('struct<"a":int>', [{"a": 1}], key)["dsha"]


@pytest.mark.parametrize("text, key", [
    (" \t" + HEX64 + "\n ", bytes.fromhex(HEX64)),  # U+0000-U+0020 at either end removed
    (HEX64.upper(), bytes.fromhex(HEX64)),
    (HEX64[:63], base64.b64decode(HEX64[:63] + "=")),  # odd hex: base64, 47 bytes
    ("0x" + HEX64, base64.b64decode("0x" + HEX64 + "==")),  # 0x is no prefix: base64 of 66 characters, 49 bytes
    (base64.urlsafe_b64encode(bytes(range(200, 232))).decode().rstrip("="), bytes(range(200, 232))),
    (base64.b64encode(bytes(range(200, 232))).decode(), bytes(range(200, 232))),
])
def test_key_text_is_read_as_spec_says(spark, text, key):
    assert sec.parse_key(text) == key  # the reference's reading, SPEC §16.2
    assert keyed(spark, "'" + text.replace("'", "''") + "'") == by_bytes(key)


@pytest.mark.parametrize("text", ["\u00a0" + HEX64, HEX64[:32] + " " + HEX64[32:], "AAAAA" * 5, HEX64[:30]])
def test_key_text_refused(spark, text):
    with pytest.raises(ValueError):
        sec.parse_key(text)
    with pytest.raises(Exception, match="neither hex nor base64|at least 16"):
        keyed(spark, "'" + text + "'")


def test_the_algorithm_named_with_a_key_is_an_id(spark):
    """SPEC §16.6: conf:NAME#ALGORITHM takes the algorithm ids (spaces around them ignored), not Python's short names."""
    name = "spark.dsha.secret.spec_decisions"
    v2 = sec.keyed2_digest('struct<"a":int>', [{"a": 1}], bytes.fromhex(HEX64))["dsha"]
    for suffix, want in (("#dsha-keyed-v2", v2), ("# dsha-keyed-v2 ", v2), ("#dsha-keyed-v1", by_bytes(
            bytes.fromhex(HEX64)))):
        spark.conf.set(name, HEX64)
        assert keyed(spark, f"'conf:{name}{suffix}'") == want
        assert sec.key_reference(f"conf:{name}{suffix}") == (name, want[:11] == "f91b4f50120" and "dsha-keyed-v2"
                                                              or "dsha-keyed-v1")
    for wrong in ("keyed-v2", "DSHA-KEYED-V2", "dsha-secure-v1"):
        spark.conf.set(name, HEX64)
        with pytest.raises(Exception, match="which is no keyed algorithm"):
            keyed(spark, f"'conf:{name}#{wrong}'")
        with pytest.raises(ValueError):
            sec.key_reference(f"conf:{name}#{wrong}")


def test_a_row_count_of_2_to_the_63_or_more(spark):
    """SPEC §6/§11.1: rows is a u64 in states and in the final hash; SQL's fingerprint shows it as a BIGINT, the same
    64 bits read as two's complement."""
    import dsha

    rows = (1 << 63) + 5
    state = ref.serialise_state('struct<"a":int>', rows, 12345)
    r = spark.sql(f"SELECT dsha_final(X'{state.hex()}') AS d, dsha_final_fingerprint(X'{state.hex()}') AS f").first()
    assert r.d == ref.finalise_state(state)
    assert r.f.rows == rows - (1 << 64) < 0
    assert dsha.Fingerprint.from_state(state).rows == rows  # Python's u64
    from dsha.spark.digests import _from_struct  # what dsha.fingerprint / dsha.equal build from SQL's struct

    assert _from_struct(r.f) == dsha.Fingerprint.from_state(state)


class Cents(T.UserDefinedType):
    """A user-defined type whose SQL type is BIGINT (Python only: Spark keeps it as a PythonUserDefinedType)."""

    @classmethod
    def sqlType(cls):
        return T.LongType()

    @classmethod
    def module(cls):
        return __name__

    def serialize(self, obj):
        return obj.cents

    def deserialize(self, datum):
        return Money(datum)


class Money:
    __UDT__ = Cents()

    def __init__(self, cents):
        self.cents = cents


def test_a_user_defined_type_is_its_sql_type_in_a_sketch(spark):
    """SPEC §2.3, §17.2.1: a UDT is hashed, and gives its filter word, as its SQL type (here BIGINT: the value)."""
    values = [(7,), (-3,), (None,)]
    udt = spark.createDataFrame([Row(c=None if v is None else Money(v)) for (v,) in values],
                                T.StructType([T.StructField("c", Cents())]))
    plain = spark.createDataFrame(values, "c bigint")
    assert udt.schema["c"].dataType.typeName() != "long"
    with sql_conf(spark, {"spark.dsha.sketch.cells": 6}):
        sketches = [bytes(df.selectExpr("dsha_sketch(*)").first()[0]) for df in (udt, plain)]
    rows = [{"c": v} for (v,) in values]
    assert sketches[0] == sketches[1] == sk.sketch_bytes('struct<"c":bigint>', rows, 6)


def sketch(spark, sql, cells, columns):
    with sql_conf(spark, {"spark.dsha.sketch.cells": cells, "spark.dsha.sketch.columnDigests": str(columns).lower()}):
        return bytes(spark.sql(f"SELECT dsha_sketch(*) FROM ({sql})").first()[0])


def test_sketches_with_and_without_column_digests_subtract(spark):
    """SPEC §17.3: a subtraction compares cells only; columns lists the left's columns, each with the right's digest
    of that name or NULL (a right without column digests); a left without column digests lists none."""
    left_sql, right_sql = "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, s)", "SELECT * FROM VALUES (1, 'a') AS t(id, s)"
    with_cols, without = sketch(spark, left_sql, 6, True), sketch(spark, right_sql, 6, False)
    d = spark.sql(f"SELECT dsha_sketch_diff(X'{with_cols.hex()}', X'{without.hex()}') AS d").first().d
    want = sk._decode_json(sk.subtract_sketches(with_cols, without))
    assert d.decoded and {bytes(e.digest).hex(): e["count"] for e in d.entries} == want["entries"]
    assert [(c.name, c.right_digest) for c in d.columns] == [("id", None), ("s", None)]
    assert [c.left_digest for c in d.columns] == [ref.table_digest('struct<"id":int>', [{"id": 1}, {"id": 2}])[
        "digest"], ref.table_digest('struct<"s":string>', [{"s": "a"}, {"s": "b"}])["digest"]]
    back = spark.sql(f"SELECT dsha_sketch_diff(X'{without.hex()}', X'{with_cols.hex()}') AS d").first().d
    assert back.decoded and back.columns == []


def test_the_estimate_of_a_difference_that_does_not_decode(spark):
    """SPEC §17.4: ceil(-(m/3)·ln(max(z, 1/2)/m)) over the unfolded difference of m cells (the gcd of both sizes)."""
    with open(os.path.join(HERE, "..", "golden", "vectors-sketch.json"), encoding="utf-8") as f:
        v = next(d for d in json.load(f)["differences"] if d["name"] == "too_large_for_m")
    left, right = v["sketch_left"], v["sketch_right"]
    d = spark.sql(f"SELECT dsha_sketch_diff(X'{left}', X'{right}') AS d").first().d
    cells = sk.subtract_sketches(bytes.fromhex(left), bytes.fromhex(right))
    assert not d.decoded and d.cells == len(cells)
    assert d.estimate == sk.estimate(cells) > 0


def test_a_manifest_in_hadoops_spelling_is_read_in_any_order(spark, tmp_path):
    """SPEC §12.1: root is the qualified Hadoop path (file:/abs: one slash, no trailing one), paths are relative and
    decoded, modified is milliseconds rounded down; §12.3: a reader does not check the order of files (a dsha-v1
    manifest, reversed, with one state changed and its checksum recomputed, is used: the digest is the changed one)."""
    import dsha

    out = tmp_path / "t x%41"  # a space and a '%' in the directory: decoded in paths, never escaped
    dsha.write(spark.createDataFrame([(i, f"v{i}") for i in range(6)], "id int, s string").repartition(2),
               str(out))
    path = out / "_dsha" / "manifest.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["root"] == "file:" + str(out.resolve()) and doc["root"].endswith("/t x%41")
    assert len(doc["files"]) == 2
    for f in doc["files"]:
        assert (out / f["path"]).exists() and not f["path"].startswith("/")
        assert f["modified"] == os.stat(out / f["path"]).st_mtime_ns // 10 ** 6
    truth = dsha.fingerprint_path(spark, str(out), use_cache=False).digest
    assert dsha.fingerprint_path(spark, str(out)).digest == truth
    doc["files"].reverse()
    doc["files"][0]["sum"] = "01" + doc["files"][0]["sum"][2:]
    doc["checksum"] = ref.manifest_checksum(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    used = ref.check_manifest(doc)["digest"]  # the reference reads it too, in its order
    got = dsha.fingerprint_path(spark, str(out)).digest
    assert got == used != truth


@pytest.mark.parametrize("algorithm, width", [("dsha-v1", 16), ("dsha-keyed-v1", 32), ("dsha-keyed-v2", 32),
                                              ("dsha-secure-v1", 4096)])
def test_state_lengths_of_every_algorithm(spark, algorithm, width):
    """SPEC §11.2: schema digest 32 and combiner state of the algorithm's width, else malformed: in the jar
    (dsha_final) and in Python (dsha.core.states, no Spark)."""
    from dsha.core import states

    schema = 'struct<"a":int>'
    good = ref.serialise_state(schema, 1, 5) if algorithm == "dsha-v1" else sec.serialise_state(algorithm, schema, 1, 5)
    at = 5 + len(ref.varint(sec.CODES.get(algorithm, 0x3D5A01))) + 4 + 32 + 8
    assert struct.unpack_from("<I", good, at)[0] == width
    bad = good[:at] + struct.pack("<I", 16 if width != 16 else 32) + good[at + 4:]
    assert states.parse(good).rows == 1
    with pytest.raises(Exception, match="combiner state"):
        states.parse(bad)
    assert spark.sql(f"SELECT dsha_final(X'{good.hex()}')").first()[0].startswith("f")
    with pytest.raises(Exception, match="combiner state"):
        spark.sql(f"SELECT dsha_final(X'{bad.hex()}')").first()


def test_a_variant_object_keeps_its_tag_in_the_secure_encoding(spark):
    """SPEC §16.1: tag 0d, then the sorted set of fields, at every depth (the worked example of the spec)."""
    import dsha

    if tuple(int(x) for x in spark.version.split(".")[:2]) < (4, 0):
        pytest.skip("VARIANT needs Spark 4.0")
    text = '{"b": 1, "a": true, "c": [{"y": null, "x": 2.5}]}'
    row = {"v": {"variant": text}}
    encoding = sec.secure_row_bytes(ref.parse_schema('struct<"v":variant>'), row)
    assert encoding[:6] == bytes.fromhex("010d03000000")  # present, object tag, three fields
    df = spark.sql(f"SELECT parse_json('{text}') AS v")
    assert dsha.fingerprint(df, algorithm="secure").digest == sec.secure_digest('struct<"v":variant>', [row])["dsha"]
    key = bytes.fromhex(HEX64)
    assert dsha.fingerprint(df, key=key).digest == sec.keyed_digest('struct<"v":variant>', [row], key)["dsha"]
