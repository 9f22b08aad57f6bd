"""The Arrow engine agrees with Spark byte for byte: Spark writes random nested tables to Parquet and computes dsha(*)
of each; dsha.arrow reads the files (no Spark) and must print the same digest (issue 15, SPEC.md Appendix A).

1,000 tables: 40 random schemas x 25 random tables each (on Spark 3.5, whose test environment has the oldest
pyarrow and numpy, the first 250: the full set runs on the newest Spark line). A schema's tables are one DataFrame with a tag column,
written partitioned by the tag in one job and hashed with one GROUP BY, so the suite costs a few Spark jobs per
schema, not per table. Half the schemas are written with Spark's default INT96 timestamps, half with
TIMESTAMP_MICROS, and a third with the legacy Parquet layout.
"""
import datetime
import decimal
import os
import random
import string

import pytest

pytest.importorskip("pyarrow")
from pyspark.sql.types import (ArrayType, BinaryType, BooleanType, ByteType, DateType, DecimalType,  # noqa: E402
                               DoubleType, FloatType, IntegerType, LongType, MapType, ShortType, StringType,
                               StructField, StructType, TimestampNTZType, TimestampType)

import dsha.arrow  # noqa: E402
from dsha.functions import dsha as dsha_agg  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="Spark writes local files for the Arrow engine; classic only")

SCHEMAS, TABLES_PER_SCHEMA = 40, 25
NAME_CHARS = string.ascii_letters + string.digits + "_éß名"


def _name(rnd, taken):
    while True:
        n = rnd.choice(string.ascii_letters + "_é名") + "".join(rnd.choice(NAME_CHARS) for _ in range(rnd.randint(0, 5)))
        if n.lower() not in taken:  # Spark's Parquet writer resolves names case-insensitively
            taken.add(n.lower())
            return n


def _atomic(rnd):
    kind = rnd.choice(["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "string",
                       "binary", "date", "timestamp", "timestamp_ntz"])
    if kind == "decimal":
        p = rnd.choice([1, 5, 9, 10, 18, 19, 25, 38])
        return DecimalType(p, rnd.randint(0, p))
    return {"boolean": BooleanType(), "tinyint": ByteType(), "smallint": ShortType(), "int": IntegerType(),
            "bigint": LongType(), "float": FloatType(), "double": DoubleType(), "string": StringType(),
            "binary": BinaryType(), "date": DateType(), "timestamp": TimestampType(),
            "timestamp_ntz": TimestampNTZType()}[kind]


def _type(rnd, depth):
    r = rnd.random()
    if depth >= 3 or r < 0.55:
        return _atomic(rnd)
    if r < 0.7:
        return ArrayType(_type(rnd, depth + 1))
    if r < 0.82:
        return MapType(_atomic(rnd), _type(rnd, depth + 1))
    taken = set()
    return StructType([StructField(_name(rnd, taken), _type(rnd, depth + 1)) for _ in range(rnd.randint(1, 3))])


def _schema(rnd):
    taken = {"_t"}
    return StructType([StructField(_name(rnd, taken), _type(rnd, 0)) for _ in range(rnd.randint(1, 5))])


EPOCH = datetime.datetime(1970, 1, 1)


def _value(rnd, t, nullable=True):
    if nullable and rnd.random() < 0.15:
        return None
    if isinstance(t, BooleanType):
        return rnd.random() < 0.5
    bits = {ByteType: 8, ShortType: 16, IntegerType: 32, LongType: 64}
    if type(t) in bits:
        b = bits[type(t)]
        return rnd.choice([0, -1, 1, -2 ** (b - 1), 2 ** (b - 1) - 1, rnd.randint(-2 ** (b - 1), 2 ** (b - 1) - 1)])
    if isinstance(t, (FloatType, DoubleType)):
        # (Spark rounds a FLOAT's value to the nearest binary32 when it creates the DataFrame)
        return rnd.choice([0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, rnd.uniform(-1e6, 1e6),
                           rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 30)])
    if isinstance(t, DecimalType):
        digits = rnd.randint(0, t.precision)
        unscaled = rnd.randint(-(10 ** digits - 1), 10 ** digits - 1)
        return decimal.Decimal(unscaled).scaleb(-t.scale)
    if isinstance(t, StringType):
        return "".join(rnd.choice("ab \u00e9\u540d\U0001F600") for _ in range(rnd.randint(0, 6)))
    if isinstance(t, BinaryType):
        return bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 6)))
    if isinstance(t, DateType):
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=rnd.randint(-200000, 200000))
    if isinstance(t, TimestampType):
        micros = rnd.randint(-10 ** 16, 10 ** 16)
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=micros)
    if isinstance(t, TimestampNTZType):
        return EPOCH + datetime.timedelta(microseconds=rnd.randint(-10 ** 16, 10 ** 16))
    if isinstance(t, ArrayType):
        return [_value(rnd, t.elementType) for _ in range(rnd.randint(0, 3))]
    if isinstance(t, MapType):
        keys = {}
        for _ in range(rnd.randint(0, 3)):
            k = _value(rnd, t.keyType, nullable=False)
            if k == k:  # a NaN key could not be looked up again
                keys[k] = _value(rnd, t.valueType)
        return keys
    return tuple(_value(rnd, f.dataType) for f in t.fields)


def _write_options(i):
    options = {"spark.sql.parquet.outputTimestampType": "INT96" if i % 2 == 0 else "TIMESTAMP_MICROS"}
    if i % 3 == 0:
        options["spark.sql.parquet.writeLegacyFormat"] = "true"
    return options


@pytest.mark.parametrize("batch", range(4))
def test_spark_parquet_digests_equal_the_arrow_engine(spark, tmp_path, batch):
    if batch and spark.version.startswith("3."):
        pytest.skip("the first 250 tables on Spark 3.5; all 1,000 on the newest line")
    """Per batch, 10 schemas x 25 tables (1,000 in all): dsha.arrow.fingerprint(directory) == Spark's dsha(*)."""
    checked = 0
    for i in range(batch * SCHEMAS // 4, (batch + 1) * SCHEMAS // 4):
        rnd = random.Random(i)
        schema = _schema(rnd)
        rows = [(t,) + tuple(_value(rnd, f.dataType) for f in schema.fields)
                for t in range(TABLES_PER_SCHEMA) for _ in range(rnd.randint(1, 8))]
        df = spark.createDataFrame(rows, StructType([StructField("_t", IntegerType())] + schema.fields))
        path = str(tmp_path / f"schema{i}")
        saved = {k: spark.conf.get(k) for k in _write_options(i)}
        for k, v in _write_options(i).items():
            spark.conf.set(k, v)
        try:
            df.repartition(2).write.partitionBy("_t").parquet(path)
        finally:
            for k, v in saved.items():
                spark.conf.set(k, v)
        written = spark.read.parquet(path)
        cols = ["`" + f.name + "`" for f in schema.fields]
        expected = {r["_t"]: r["d"] for r in written.groupBy("_t").agg(dsha_agg(*cols).alias("d")).collect()}
        assert sorted(expected) == list(range(TABLES_PER_SCHEMA))
        for t in range(TABLES_PER_SCHEMA):
            got = dsha.arrow.fingerprint(os.path.join(path, f"_t={t}"))
            assert got.digest == expected[t], (i, t, schema.simpleString(), _write_options(i))
            checked += 1
    assert checked == SCHEMAS // 4 * TABLES_PER_SCHEMA


def _spark_digest(df):
    return df.agg(dsha_agg(*["`" + c + "`" for c in df.columns]).alias("d")).first()["d"]


def _write_with(spark, df, path, options):
    saved = {k: spark.conf.get(k) for k in options}
    for k, v in options.items():
        spark.conf.set(k, v)
    try:
        df.coalesce(1).write.parquet(path)
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)


# Spark 3.5 refuses to write instants before 1900 unless told how to rebase them; CORRECTED is Spark 4's default
_CORRECTED = {"spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
              "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED"}
_LONG_MIN, _LONG_MAX = "-9223372036854775808", "9223372036854775807"


def test_microsecond_timestamps_at_the_ends_of_long_equal_spark(spark, tmp_path):
    """Issue 34, case 4: Long.MinValue/MaxValue µs as TIMESTAMP and TIMESTAMP_NTZ, alone and inside arrays, maps and
    structs, written as TIMESTAMP_MICROS, hash as in Spark (Long.MinValue was refused as "out of the range")."""
    t = f"timestamp_micros(CAST('{_LONG_MIN}' AS BIGINT))"
    u = f"timestamp_micros(CAST('{_LONG_MAX}' AS BIGINT))"
    df = spark.sql(f"SELECT {t} AS t, CAST({t} AS timestamp_ntz) AS n, array({t}, {u}, NULL) AS a, "
                   f"map(1, {t}, 2, {u}) AS m, named_struct('x', {u}, 'y', CAST({t} AS timestamp_ntz)) AS s "
                   f"UNION ALL SELECT {u}, CAST({u} AS timestamp_ntz), array({u}), map(3, {u}), "
                   f"named_struct('x', {t}, 'y', CAST({u} AS timestamp_ntz))")
    path = str(tmp_path / "micros")
    _write_with(spark, df, path, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", **_CORRECTED})
    assert dsha.arrow.fingerprint(path).digest == _spark_digest(spark.read.parquet(path))


@pytest.mark.parametrize("micros", [_LONG_MIN, "-9223372036854775807", _LONG_MAX, "-1000000000000000000",
                                    "-300000000000000000", "-192420059126290450", "9012505233654775808"])
def test_int96_timestamps_arrow_cannot_read_exactly_are_refused(spark, tmp_path, micros):
    """Issue 34, case 4: INT96 values whose nanoseconds Spark stores negative are read by Arrow with 2^64/1000 µs
    added: they gave another digest silently; now the Arrow engine refuses them (also inside an array)."""
    df = spark.sql(f"SELECT timestamp_micros(CAST('{micros}' AS BIGINT)) AS t, "
                   f"array(timestamp_micros(0)) AS a UNION ALL SELECT timestamp_micros(0), "
                   f"array(timestamp_micros(CAST('{micros}' AS BIGINT)))")
    path = str(tmp_path / "int96")
    _write_with(spark, df, path, {"spark.sql.parquet.outputTimestampType": "INT96", **_CORRECTED})
    assert spark.read.parquet(path).selectExpr("min(unix_micros(t))").first()[0] in (int(micros), 0)
    for columns in (["t"], ["a"]):
        with pytest.raises(dsha.arrow.UnsupportedTypeError, match="INT96 timestamp.*--engine spark"):
            dsha.arrow.fingerprint(path, columns=columns)


def test_int96_timestamps_at_the_ends_of_the_exact_range_equal_spark(spark, tmp_path):
    """The first and last INT96 values the Arrow engine hashes (SPEC.md Appendix A), with the years around them."""
    values = ["-192420059126290449", "-192420059126290448", "-100000000000000000", "-62135596800000000", "0",
              "253402300799999999", "9012505233654775807"]
    df = spark.sql(" UNION ALL ".join(f"SELECT timestamp_micros(CAST('{v}' AS BIGINT)) AS t, "
                                      f"map('k', timestamp_micros(CAST('{v}' AS BIGINT))) AS m" for v in values))
    path = str(tmp_path / "int96")
    _write_with(spark, df, path, {"spark.sql.parquet.outputTimestampType": "INT96", **_CORRECTED})
    written = spark.read.parquet(path)
    assert sorted(r[0] for r in written.selectExpr("unix_micros(t)").collect()) == sorted(int(v) for v in values)
    assert dsha.arrow.fingerprint(path).digest == _spark_digest(written)


# Plain CSV with what tends to go wrong: leading zeros, quoted commas, empty and quoted-empty fields, decimals,
# dates, "null"-like words (strings to Spark), whitespace, backslashes outside quotes, Unicode, CRLF, blank lines,
# an empty header name and two names equal but for case (Spark renames them), and a second file.
_CSV_FILES = {
    "a.csv": b'id,name,amount,day,note,,Name\n007,"Smith, J",1.50,2024-01-31,,x,dup\n'
             b'1,"",-0.0,1999-12-31,"say hi",,\n2,NA,1e5,,a\\\\b,y,z\n   3  , spaced ,NaN,null,"multi",,\n'
             b'4,N/A,NULL,nan,#x,\\N,\n\n5,"\xc3\xa9",1.7976931348623157E309,00:00,a\\b,"",\r\n'
             b'6,12345678901234567890.5,2024-13-45T00:00:00,true,"",-,\n',
    "b.csv": b'id,name,amount,day,note,,Name\n8,,,,,,\n0009,"a,b,c",0.1,1e-400,"""",,',
}


def test_csv_is_read_as_spark_reads_it_by_both_engines(spark, tmp_path):
    """Issue 34, case 2: one CSV directory, one digest: every column a string with Spark's names (the Arrow engine
    inferred bigint/double/date and gave another digest)."""
    d = tmp_path / "csv"
    d.mkdir()
    csv_files = dict(_CSV_FILES, **{"b.csv": _CSV_FILES["b.csv"].replace(b',"""",', b',"q",')})
    for name, data in csv_files.items():
        (d / name).write_bytes(data)
    from dsha.core.paths import reader_options
    df = spark.read.options(**reader_options("csv", str(d))).csv(str(d))
    assert set(df.columns) == {"id", "name1", "amount", "day", "note", "_c5", "Name6"}
    assert df.count() == 9
    assert dsha.arrow.fingerprint(str(d)).digest == _spark_digest(df)
    assert dsha.arrow.fingerprint(str(d), columns=["Name6", "id"]).digest == _spark_digest(df.select("Name6", "id"))
    (d / "b.csv").write_bytes(_CSV_FILES["b.csv"])  # '""""': a quote after a closing one, which Spark reads its own way
    with pytest.raises(dsha.arrow.UnsupportedTypeError, match=r"b\.csv: a quote that closes a field"):
        dsha.arrow.fingerprint(str(d))


@pytest.mark.parametrize("line", [b'"a""b",1', b'"x" ,2', b' "x",3', b'a"b,4', b'"a\\"b",5', b'"a\\b",6',
                                  b'"\\",7', b'"multi\nline",8', b'"open,9'])
def test_csv_quoting_spark_reads_its_own_way_is_refused(spark, tmp_path, line):
    """Quoting that Spark's parser reads in its own way (a doubled quote is kept as written, an escape is a
    backslash, a quote after a space is text): the Arrow engine refuses the file rather than give another digest."""
    f = tmp_path / "odd.csv"
    f.write_bytes(b"v,w\nplain,0\n" + line + b"\n")
    spark_rows = spark.read.options(header="true").csv(str(f)).count()
    assert spark_rows >= 2
    with pytest.raises(dsha.arrow.UnsupportedTypeError, match=r"CSV file .*odd\.csv.*--engine spark"):
        dsha.arrow.fingerprint(str(f))


# JSON Lines with what tends to go wrong between engines: integers at the ends of bigint and beyond (decimal, then
# double), floats, ints mixed with floats, NaN/Infinity, booleans, nulls, an all-null field, strings that look like
# dates, timestamps and numbers, nested objects with their fields in other orders, arrays of mixed kinds (read as
# text), empty objects and arrays, missing fields, an empty string in a number field, Unicode and escapes, CRLF and
# blank lines, and a second file with other fields.
_JSON_FILES = {
    "a.json": (
        '{"id":1,"n":9223372036854775807,"big":18446744073709551616,"huge":1' + "0" * 40 + ',"f":1.5,"mix":1,'
        '"b":true,"nul":null,"day":"2024-01-31","ts":"2024-01-31T10:00:00Z","num":"12.50","s":{"y":1,"x":"a"},'
        '"arr":[1,"a",true,null,{"q":[1,2]},[3]],"eo":{},"ea":[],"u":"\\u00e9\\ud83d\\ude00 \\"q\\" \\\\ \\/ \\t名",'
        '"k":{"z":{"b":2,"a":1}}}\r\n'
        '{"k":{"z":{"a":3}},"id":2,"n":-9223372036854775808,"big":-99999999999999999999,"huge":1e400,"f":-0.0,'
        '"mix":2.25,"b":false,"nul":null,"day":"31/01/2024","s":{"x":"b","w":[]},"arr":[2],"eo":{},"ea":[[]],'
        '"u":"","text":{"\\u001F":"\\uD83D\\uDE00","n":[1,-2,true,null]}}\n'
        '\n'
        '{"id":3,"f":NaN,"mix":-7,"ts":"1999-12-31 23:59:59","arr":[],"nan":Infinity,"text":"plain","n":""}\n'
        '   \n'
        '{"id":4,"f":-Infinity,"nan":-Infinity,"text":[1,{"a":"é"}],"s":null,"k":{"z":{}}}\n'
    ).encode("utf-8"),
    "b.json": (
        '{"id":5,"only_b":"x","s":{"v":1.5e300},"mix":12345678901234567890}\n'
        '{}\n'
        '{"id":6,"only_b":null,"big":1,"f":1,"text":false}\n'
    ).encode("utf-8"),
}


def _spark_json(spark, path):
    from dsha.core.paths import reader_options
    return spark.read.options(**reader_options("json", path)).json(path)


def test_json_is_read_as_spark_reads_it_by_both_engines(spark, tmp_path):
    """Issue 34, case 2: one JSON directory, one digest: the Arrow engine infers Spark's schema (it used Arrow's own
    inference: dates as timestamps, big integers refused, mixed kinds an error) and reads each value as Spark does."""
    from dsha.arrow._json import infer_schema, simple_string

    d = tmp_path / "json"
    d.mkdir()
    for name, data in _JSON_FILES.items():
        (d / name).write_bytes(data)
    df = _spark_json(spark, str(d))
    files = [str(d / n) for n in sorted(_JSON_FILES)]
    assert simple_string(infer_schema(files)) == df.schema.simpleString()
    assert df.count() == 7 and "_corrupt_record" not in df.columns
    types = dict(df.dtypes)
    assert (types["n"], types["big"], types["huge"], types["mix"], types["day"], types["ts"], types["nul"]) == (
        "bigint", "decimal(20,0)", "double", "double", "string", "string", "string")
    assert types["arr"] == "array<string>" and types["text"] == "string" and "eo" not in types
    assert dsha.arrow.fingerprint(str(d)).digest == _spark_digest(df)
    for cols in (["text", "arr"], ["s", "k"], ["n", "id"]):
        assert dsha.arrow.fingerprint(str(d), columns=cols).digest == _spark_digest(df.select(*cols)), cols
    assert dsha.arrow.fingerprint(str(d / "b.json")).digest == _spark_digest(_spark_json(spark, str(d / "b.json")))


# Values Spark 3.5 and 4 read differently (3.5 re-writes a value read as a string with Jackson; 4 keeps its text as
# written), or that Spark reads as no Arrow reading can: the Arrow engine refuses them, naming the file and field.
# (line, field, what the refusal says, Spark 3.5's string, Spark 4's string)
_JSON_REFUSED = [
    ('{"v":{"a": 1}}', "v", "not written as Spark 3.5", '{"a":1}', '{"a": 1}'),
    ('{"v":[1,-0]}', "v", "not written as Spark 3.5", '[1,0]', '[1,-0]'),
    ('{"v":{"a":"\\u001f"}}', "v", "not written as Spark 3.5", '{"a":"\\u001F"}', '{"a":"\\u001f"}'),
    ('{"v":{"a":"😀"}}', "v", "not written as Spark 3.5", '{"a":"\\uD83D\\uDE00"}', '{"a":"😀"}'),
    ('{"v":1E10}', "v", "floating-point number", "1.0E10", "1E10"),
    ('{"v":[1.5]}', "v", "floating-point number", "[1.5]", "[1.5]"),
]


@pytest.mark.parametrize("line,field,reason,v35,v4", _JSON_REFUSED)
def test_json_values_spark_versions_read_apart_are_refused(spark, tmp_path, line, field, reason, v35, v4):
    f = tmp_path / "odd.json"
    f.write_text('{"v":"text"}\n' + line + "\n", encoding="utf-8")
    got = [r["v"] for r in _spark_json(spark, str(f)).collect()]
    assert got == ["text", v35 if spark.version.startswith("3.") else v4]
    with pytest.raises(dsha.arrow.UnsupportedTypeError, match=rf"JSON file .*odd\.json, line 2: .*{reason}.*"
                                                              rf"--engine spark"):
        dsha.arrow.fingerprint(str(f))


@pytest.mark.parametrize("lines,reason", [
    (['{"a":1}', '{"a":2,"A":3}'], "differ only by case"),
    (['{"s":{"x":1}}', '{"s":{"x":""}}'], "empty string in the field s.x"),
    (['{"s":[1]}', '{"s":[1,""]}'], r"empty string in the field s\[\]"),
    (['{"a":1}', '{"a":2,"a":3}'], "twice in one object"),
    (['{"a":1}', "{'a':2}"], "not a JSON document"),
    (['{"a":1}', '[{"a":2}]'], "not a JSON object"),
    (['{"a":1,"_corrupt_record":"x"}'], "_corrupt_record"),
    (['{"a":"\\ud800"}'], "lone UTF-16 surrogate"),
    (['{"a":1' + "0" * 1000 + '}'], "a number of 1001 characters"),
])
def test_json_lines_spark_reads_its_own_way_are_refused(spark, tmp_path, lines, reason):
    """Lines Spark reads as malformed, with partial nulls, by case-insensitive names, or into its corrupt-record
    column: refused (a naive reading would hash other values than Spark's)."""
    f = tmp_path / "odd.json"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        df = _spark_json(spark, str(f))
        spark_view = (df.columns, df.count())
    except Exception as e:  # names that differ only by case: Spark refuses too
        spark_view = str(e)
    assert spark_view and (isinstance(spark_view, str) or spark_view[1] >= 1)
    with pytest.raises(dsha.arrow.UnsupportedTypeError, match=rf"JSON .*odd\.json.*{reason}.*--engine spark"):
        dsha.arrow.fingerprint(str(f))
