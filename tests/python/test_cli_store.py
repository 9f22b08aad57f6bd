"""`dsha check` / `dsha record`: exit 0 unchanged, 1 changed or never recorded, 2 error; the same records as the
Python API."""
import json
import os

import pytest

import dsha
from cli_runner import run_cli

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI starts its own embedded Spark; run once")


def test_check_and_record(spark, tmp_path):
    df = spark.createDataFrame([(i, f"n{i}") for i in range(30)], "id INT, name STRING")
    df.repartition(2).write.orc(str(tmp_path / "t"))
    df.write.option("header", "true").csv(str(tmp_path / "c"))
    data, csv, store = str(tmp_path / "t"), str(tmp_path / "c"), str(tmp_path / "store")

    recorded = run_cli("record", "step", data, csv, "--store", store, "--json")
    assert recorded.returncode == 0, recorded.stderr
    out = json.loads(recorded.stdout)
    assert out["inputs"][data]["format"] == "orc" and out["inputs"][csv]["format"] == "csv"
    assert out["inputs"][data]["digest"] == dsha.fingerprint(df).digest  # also the digest `dsha hash` prints

    same = run_cli("check", "step", data, csv, "--store", "file:" + store)
    assert same.returncode == 0, same.stderr
    assert same.stdout.startswith("unchanged since 20")

    # the Python API reads what the CLI wrote (same input names), and the other way round
    assert not dsha.changed([data, csv], store=store, name="step")
    df.where("id < 29").write.mode("append").orc(data)  # 29 more rows
    changes = dsha.changed([data, csv], store=store, name="step")
    assert [(c.input, c.what) for c in changes] == [(data, "row count")]
    check = run_cli("check", "step", data, csv, "--store", store, "--json")
    assert check.returncode == 1, check.stderr
    out = json.loads(check.stdout)
    assert out["changed"] and out["changes"] == [{"input": data, "what": "row count", "detail": "30 -> 59 rows"}]
    assert out["inputs"][data]["rows"] == 59

    # text output; "never recorded" is a change (exit 1): the step has to run
    changes.record()
    text = run_cli("check", "step", csv, "--store", store, "--code-version", "2")
    assert text.returncode == 1, text.stderr
    assert text.stdout.splitlines() == ["changed:", "  code version: None -> 2",
                                        f"  {data}: input removed: not among the inputs any more"]
    never = dsha.changed([csv], store=store, name="never")
    assert never and [c.what for c in never] == ["never recorded"]


@pytest.mark.parametrize("case", ["corrupt store", "missing input", "columns"])
def test_errors_exit_2_before_spark_starts(tmp_path, case):
    store = tmp_path / "store"
    dsha.store.DirectoryStore(str(store)).put(dsha.store.Record("step", {}))
    [folder] = [f for f in os.listdir(store) if not f.startswith(".")]  # not the .dsha-store marker
    [entry] = os.listdir(store / folder)
    (store / folder / entry).write_text('{"format": "dsha-store/1", "name": "step"}')
    data = str(tmp_path)
    args = {"corrupt store": ["check", "step", data, "--store", str(store)],
            "missing input": ["record", "step", str(tmp_path / "nope"), "--store", str(store)],
            "columns": ["check", "step", data, "--store", str(store), "--columns", "a"]}[case]
    out = run_cli(*args, fresh_process=True)  # a process: Spark never starts
    assert out.returncode == 2 and out.stdout == ""
    expected = {"corrupt store": f"dsha: error: corrupt dsha store entry {store / folder / entry}: KeyError",
                "missing input": "dsha: error: no such file or directory",
                "columns": "dsha: error: --columns is not supported by dsha check"}[case]
    assert out.stderr.strip().splitlines()[-1].startswith(expected), out.stderr
    assert "Traceback" not in out.stderr and "Spark" not in out.stderr


def test_record_creates_a_store_only_when_asked(spark, tmp_path):
    spark.range(3).write.parquet(str(tmp_path / "t"))
    store = tmp_path / "mnt" / "state"  # its parent is missing: a file system not mounted, or a typo
    refused = run_cli("record", "step", str(tmp_path / "t"), "--store", str(store))
    assert refused.returncode == 2 and "cannot be a store: its parent" in refused.stderr and not store.exists()
    created = run_cli("record", "step", str(tmp_path / "t"), "--store", str(store), "--create-store")
    assert created.returncode == 0, created.stderr
    assert (store / ".dsha-store").is_file()
    assert run_cli("check", "step", str(tmp_path / "t"), "--store", str(store)).returncode == 0


def test_local_parquet_checks_without_a_jvm_and_both_engines_agree(spark, tmp_path):
    """`--engine auto` takes the Arrow engine (about a second, no JVM) for local Parquet and a local store, unless
    something asks for Spark; records written by either engine are read by the other with the same answers."""
    from dsha.cli import store as store_command
    from dsha.cli.parser import parser

    df = spark.createDataFrame([(i, f"n{i}", i * 0.25) for i in range(40)], "id BIGINT, name STRING, score DOUBLE")
    data, store = str(tmp_path / "t"), str(tmp_path / "store")
    df.repartition(2).write.parquet(data)

    def engine(*extra):
        return store_command.choose(parser().parse_args(["check", "step", data, "--store", store, *extra]))

    assert engine() == "arrow"
    assert [engine("--approximate"), engine("--conf", "spark.x=1"), engine("--master", "local[1]"),
            engine("--engine", "spark"), engine("--store", "table:records")] == ["spark"] * 5
    recorded = run_cli("record", "step", data, "--store", store, "--create-store", "--engine", "arrow", "--json")
    assert recorded.returncode == 0, recorded.stderr
    assert json.loads(recorded.stdout)["inputs"][data]["digest"] == dsha.fingerprint(df).digest
    for chosen in ("arrow", "spark"):
        same = run_cli("check", "step", data, "--store", store, "--engine", chosen)
        assert same.returncode == 0 and same.stdout.startswith("unchanged since 20"), (chosen, same.stderr)
    df.where("id < 5").write.mode("append").parquet(data)
    answers = {chosen: run_cli("check", "step", data, "--store", store, "--engine", chosen, "--json")
               for chosen in ("arrow", "spark")}
    assert {c: a.returncode for c, a in answers.items()} == {"arrow": 1, "spark": 1}
    arrow_out, spark_out = (json.loads(answers[c].stdout) for c in ("arrow", "spark"))
    assert arrow_out["changes"] == spark_out["changes"] == [{"input": data, "what": "row count",
                                                             "detail": "40 -> 45 rows"}]
    assert arrow_out["inputs"] == spark_out["inputs"]
    # a directory with a manifest keeps its per-file states: the Spark engine
    dsha.write(df, str(tmp_path / "w"), format="parquet")
    assert store_command.choose(parser().parse_args(["check", "step", str(tmp_path / "w"), "--store", store])) == "spark"
    refused = run_cli("check", "step", data, "--store", store, "--engine", "arrow", "--approximate")
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "dsha: error: --approximate needs the Spark engine (file metadata through Hadoop's listing)")
