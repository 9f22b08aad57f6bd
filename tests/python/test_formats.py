"""Inputs are read as what they are (issue 34, item 1): the format of a directory from every data file in it (through
partition folders), sidecars left out with one note, mixed directories and a --format over a Delta or Iceberg table's
directory refused before Spark starts. Pure Python but the last test (it reads through Spark)."""
import json
import os
import warnings

import pytest

import dsha
from dsha.core.paths import detect, format_of, reader_options
from dsha.errors import DshaWarning, UsageError
from dsha.inputs import Path, fingerprint_input, load

from cli_runner import run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def parquet_dir(root, sidecars=(), partitions=True):
    """100 rows of Parquet in two partition folders, and the given sidecar files (name -> text) at the top."""
    os.makedirs(root)
    for k in (1, 2) if partitions else (None,):
        folder = os.path.join(root, f"k={k}") if k else root
        os.makedirs(folder, exist_ok=True)
        pq.write_table(pa.table({"a": list(range(50))}), os.path.join(folder, "part-0.parquet"))
    for name, text in dict(sidecars).items():
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    return str(root)


def test_every_file_decides_not_the_first_name(tmp_path):
    # The old rule read the first name in sorted order: README.txt -> text, metadata.json -> json
    path = parquet_dir(tmp_path / "t", {"README.txt": "about", "metadata.json": '{"a": 1}', "NOTES.md": "x",
                                        "_SUCCESS": "", ".part-0.parquet.crc": ""})
    found = detect(path)
    assert found.format == "parquet"
    assert found.sidecars == ("NOTES.md", "README.txt", "metadata.json")  # _ and . names are not even looked at
    assert reader_options("parquet", path) == {"pathGlobFilter": "*.parquet"}
    with pytest.warns(DshaWarning, match=r"read as parquet; not reading 3 files .*NOTES.md, README.txt, metadata"):
        assert format_of(path, None) == "parquet"


def test_no_sidecar_no_filter_and_no_note(tmp_path):
    path = parquet_dir(tmp_path / "t")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert format_of(path, None) == "parquet" and reader_options("parquet", path) == {}


@pytest.mark.parametrize("names,fmt", [
    (["a.json", "b.json", "c.json"], "json"),  # a directory of JSON files is JSON
    (["a.csv", "b.csv", "notes.txt"], "csv"),  # a note beside CSV
    (["a.jsonl.gz", "b.json"], "json"),
    (["x.txt", "y.txt"], "text"),
    (["part-00000", "part-00001"], "parquet"),  # no extension: Spark's default, as before
    (["a.parquet", "b.orc"], None),
    (["a.parquet", "b.csv"], None),  # CSV is data, never a sidecar
    (["a.csv", "b.json"], None),
    (["a.parquet", "x.json", "y.json"], None),  # more JSON than Parquet: not metadata
    (["a.parquet", "README", "part-00000"], None),  # cannot tell the data files from sidecars by name
])
def test_directory_rule(tmp_path, names, fmt):
    for n in names:
        os.makedirs(os.path.dirname(tmp_path / "d" / n), exist_ok=True)
        (tmp_path / "d" / n).write_text("x")
    if fmt:
        assert detect(str(tmp_path / "d")).format == fmt
    else:
        with pytest.raises(UsageError, match=r"mixes formats: .*\(1 file: "):
            detect(str(tmp_path / "d"))


def test_mixed_error_names_formats_and_files_in_partitions(tmp_path):
    path = parquet_dir(tmp_path / "t")
    for i in range(5):
        (tmp_path / "t" / "k=2" / f"extra{i}.csv").write_text("a\n1\n")
    with pytest.raises(UsageError) as e:
        detect(path)
    message = str(e.value)
    assert "\n" not in message and path in message
    assert "parquet (2 files: k=1/part-0.parquet, k=2/part-0.parquet)" in message
    assert "csv (5 files: k=2/extra0.csv, k=2/extra1.csv, k=2/extra2.csv, ...)" in message


def delta_dir(root):
    path = parquet_dir(root, partitions=False)
    os.makedirs(os.path.join(path, "_delta_log"))
    return path


def iceberg_dir(root):
    os.makedirs(root / "metadata")
    (root / "metadata" / "v1.metadata.json").write_text("{}")
    parquet_dir(root / "data")
    return str(root)


@pytest.mark.parametrize("table", ["delta", "iceberg"])
def test_a_format_over_a_table_directory_needs_force(tmp_path, table):
    path = delta_dir(tmp_path / "t") if table == "delta" else iceberg_dir(tmp_path / "t")
    with pytest.raises(UsageError, match=r"is a (Delta|Iceberg) table: its log decides which files are live.*--force"):
        format_of(path, "parquet")
    assert format_of(path, "parquet", force=True) == "parquet"
    assert format_of(path, table) == table
    if table == "delta":
        assert format_of(path, None) == "delta"
    else:  # the old rule read data/ as Parquet: every file, removed ones too
        with pytest.raises(UsageError, match="is an Iceberg table: its metadata decides which files are live"):
            format_of(path, None)
    with pytest.raises(UsageError, match="--force"):  # the Python API: dsha.Path(..., format=) the same
        load(None, Path(path, "parquet"))


def test_arrow_engine_reads_the_data_files_only(tmp_path):
    import dsha.arrow
    clean = parquet_dir(tmp_path / "clean")
    path = parquet_dir(tmp_path / "t", {"README.txt": "about", "metadata.json": '{"a": 1}'})
    expected = dsha.arrow.fingerprint(clean)
    assert expected.rows == 100
    assert dsha.arrow.fingerprint(path) == expected  # the old rule: "cannot tell"/a JSON parse error
    assert dsha.arrow.fingerprint(path, format="parquet") == expected


def test_cli_arrow_engine_notes_sidecars_once(tmp_path):
    pytest.importorskip("numpy")
    path = parquet_dir(tmp_path / "t", {"README.txt": "about", "metadata.json": '{"a": 1}'})
    clean = run_cli("hash", parquet_dir(tmp_path / "clean"), "--engine", "arrow", "--json")
    out = run_cli("hash", path, "--engine", "arrow", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["digest"] == json.loads(clean.stdout)["digest"]
    notes = [line for line in out.stderr.splitlines() if "not reading" in line]
    assert notes == [f"dsha: warning: {path}: read as parquet; not reading 2 files that are not parquet data: "
                     f"README.txt, metadata.json"]


@pytest.mark.parametrize("case", ["mixed", "delta --format", "iceberg"])
def test_cli_refuses_before_spark_starts(tmp_path, case):
    if case == "mixed":
        path = parquet_dir(tmp_path / "t", {"extra.csv": "a\n1\n"})
        expected = "mixes formats: parquet (2 files: k=1/part-0.parquet, k=2/part-0.parquet); csv (1 file: extra.csv)"
        args = ["hash", path]
    elif case == "delta --format":
        path = delta_dir(tmp_path / "t")
        expected = "is a Delta table: its log decides which files are live"
        args = ["hash", path, "--format", "parquet"]
    else:
        path = iceberg_dir(tmp_path / "t")
        expected = "is an Iceberg table"
        args = ["record", "step", path, "--store", str(tmp_path / "store")]
    out = run_cli(*args, fresh_process=True)
    assert out.returncode == 2 and out.stdout == ""
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("dsha: error: ") and path in line and expected in line


def test_spark_reads_parquet_beside_sidecars(spark, tmp_path):
    expected = dsha.fingerprint(spark.read.parquet(parquet_dir(tmp_path / "clean")))
    path = parquet_dir(tmp_path / "t", {"README.txt": "about", "metadata.json": '{"a": 1}'})
    with pytest.warns(DshaWarning, match="not reading 2 files"):
        per_file = fingerprint_input(spark, Path(path)).fingerprint  # per-file states, through the JVM's listing
    with pytest.warns(DshaWarning, match="not reading 2 files"):
        whole = dsha.fingerprint(load(spark, Path(path)))  # one read
    assert per_file == whole == expected and expected.rows == 100
    forced = delta_dir(tmp_path / "delta")  # an empty log: the files as they are, when asked for
    assert dsha.fingerprint(load(spark, Path(forced, "parquet", force=True))).rows == 50
