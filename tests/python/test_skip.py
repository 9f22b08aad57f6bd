"""Skip-if-unchanged: what dsha.changed reports, when run_if_changed and skip_if_unchanged record (only after
success), and that a step's code version follows its helpers (the code version itself:
tests/arrow/test_code_version.py)."""
import importlib
import os
import sys
import uuid

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dsha
from dsha.store import DirectoryStore


def entries(store_dir):
    """The records in a directory store (not its .dsha-store marker)."""
    return sum(len([f for f in files if not f.startswith(".")]) for _, _, files in os.walk(store_dir))


def test_changed_says_what_changed_per_input(spark, tmp_path):
    store = str(tmp_path)
    a, b = spark.range(5), spark.range(3).selectExpr("id", "'x' AS s")
    first = dsha.changed({"a": a, "b": b}, store=store, name="step", version="1")
    assert [(c.input, c.what) for c in first] == [(None, "never recorded")] and first.inputs == ["a", "b"]
    first.record()
    same = dsha.changed({"a": spark.range(5).orderBy("id", ascending=False), "b": b}, store=store, name="step",
                        version="1")
    assert not same and same.inputs == [] and same.explain().startswith("unchanged since 20")
    other = dsha.changed({"a": spark.range(6), "b": b.selectExpr("id", "'y' AS s"), "c": spark.range(1)},
                         store=store, name="step", version="1")
    assert [(c.input, c.what) for c in other] == [("a", "row count"), ("b", "content"), ("c", "new input")]
    assert other.inputs == ["a", "b", "c"] and "5 -> 6 rows" in other.explain()
    gone = dsha.changed({"a": a.selectExpr("id", "1 AS extra")}, store=store, name="step", version="2")
    assert [(c.input, c.what) for c in gone] == [(None, "code version"), ("a", "schema"), ("b", "input removed")]
    assert gone.inputs == ["a"] and '"extra":int' in gone.explain()


def test_paths_and_tables_as_inputs(spark, tmp_path):
    df = spark.createDataFrame([(i, f"n{i}") for i in range(20)], "id INT, name STRING")
    df.write.option("header", "true").csv(str(tmp_path / "people.csv"))
    df.repartition(3).write.parquet(str(tmp_path / "pq"))
    view = f"people_{uuid.uuid4().hex[:8]}"
    df.createOrReplaceTempView(view)
    store = str(tmp_path / "store")
    inputs = [str(tmp_path / "people.csv"), dsha.Path(str(tmp_path / "pq")), "table:" + view]
    recorded = dsha.record(inputs, store=store, name="step")
    kinds = {k: (i.kind, i.format, i.fingerprint.rows) for k, i in recorded.inputs.items()}
    assert kinds == {str(tmp_path / "people.csv"): ("path", "csv", 20), str(tmp_path / "pq"): ("path", "parquet", 20),
                     "table:" + view: ("table", None, 20)}
    # the same inputs spelled otherwise, and the data rewritten in another layout: unchanged
    df.coalesce(1).write.mode("overwrite").parquet(str(tmp_path / "pq"))
    respelled = [dsha.Path(str(tmp_path / "people.csv"), "csv"), str(tmp_path / "pq"), dsha.Table(view)]
    assert not dsha.changed(respelled, store=store, name="step")
    # read as another format, the file is other data
    as_text = dsha.changed([dsha.Path(str(tmp_path / "people.csv"), "text")] + respelled[1:], store=store, name="step")
    assert [(c.input, c.what) for c in as_text] == [(str(tmp_path / "people.csv"), "schema")]
    with pytest.raises(TypeError, match="give inputs as a dict"):
        dsha.changed([df], store=store, name="step")
    with pytest.raises(Exception, match="no such file or directory"):
        dsha.changed([str(tmp_path / "missing")], store=store, name="step")


def test_run_if_changed_records_only_after_success(spark, tmp_path):
    store, inputs = str(tmp_path), {"a": spark.range(4)}
    with pytest.raises(RuntimeError):
        with dsha.run_if_changed("step", inputs, store=store) as run:
            assert run.should_run
            raise RuntimeError("the step failed")
    assert entries(tmp_path) == 0  # a failed step leaves no record: it runs again next time
    ran = []
    with dsha.run_if_changed("step", inputs, store=store) as run:
        assert run.should_run and run.changes.inputs == ["a"]
        ran.append(1)
    assert ran == [1] and run.recorded == DirectoryStore(store).latest("step")
    with dsha.run_if_changed("step", inputs, store=store) as run:
        assert not run.should_run
        run.skip()
        ran.append(2)  # not reached
    assert ran == [1] and entries(tmp_path) == 1
    # skip() leaves its own block, also from inside another one; an inner block records on its own
    with dsha.run_if_changed("outer", inputs, store=store) as outer:
        with dsha.run_if_changed("inner", {"b": spark.range(1)}, store=store):
            outer.skip()
        ran.append(3)  # not reached
    assert ran == [1] and DirectoryStore(store).latest("outer") is None
    assert DirectoryStore(store).latest("inner") is None  # it was left by an exception


def test_skip_if_unchanged_decorator(spark, tmp_path):
    calls, store = [], str(tmp_path)
    data = {"n": 3}

    @dsha.skip_if_unchanged(name="step", inputs=lambda fail=False: {"t": spark.range(data["n"])}, store=store)
    def step(fail=False):
        calls.append(data["n"])
        if fail:
            raise ValueError("failed")
        return "done"

    assert step.code_version.startswith("code:")
    assert step() == "done" and step() is None and calls == [3]
    data["n"] = 4
    with pytest.raises(ValueError):
        step(fail=True)
    assert step() == "done" and step() is None and calls == [3, 4, 4]  # the failed run recorded nothing

    @dsha.skip_if_unchanged(name="step", inputs=lambda: {"t": spark.range(data["n"])}, store=store)
    def step():  # noqa: F811  other code, same name and inputs: runs
        calls.append("new code")

    step()
    step()
    assert calls == [3, 4, 4, "new code"]

    @dsha.skip_if_unchanged(name="versioned", inputs={"t": spark.range(2)}, store=store, version="v1")
    def versioned():
        calls.append("v1")

    @dsha.skip_if_unchanged(name="versioned", inputs={"t": spark.range(2)}, store=store, version="v1")
    def versioned_changed():  # other code, but the same version=: skipped
        calls.append("v1 again")

    versioned()
    versioned_changed()
    assert versioned.code_version == "v1" and calls[-1] == "v1"


HELPER = "def rows(n):\n    return n * 2\n"
STEP = """
import cv_e2e_helper

def step():
    return cv_e2e_helper.rows(3)
"""


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                    reason="the code version does not depend on the transport: once, in the classic pass")
def test_skip_if_unchanged_reruns_after_a_helper_changed(spark, tmp_path, monkeypatch):
    """The code version follows the step into a helper of another module (the whole, Spark-free, in
    tests/arrow/test_code_version.py): a changed helper re-runs the step, a reformatted one does not."""
    store = str(tmp_path / "store")

    def decorated(helper):
        root = tmp_path / uuid.uuid4().hex
        root.mkdir()
        (root / "cv_e2e_helper.py").write_text(helper)
        (root / "cv_e2e_step.py").write_text(STEP)
        for name in ("cv_e2e_helper", "cv_e2e_step"):
            sys.modules.pop(name, None)
        monkeypatch.syspath_prepend(str(root))
        step = importlib.import_module("cv_e2e_step").step
        return dsha.skip_if_unchanged(name="e2e", inputs={"t": spark.range(2)}, store=store)(step)

    runs = [decorated(HELPER)(), decorated("# reformatted\ndef rows( n ):\n    return n*2\n")(),
            decorated(HELPER.replace("n * 2", "n * 3"))(), decorated(HELPER.replace("n * 2", "n * 3"))()]
    assert runs == [6, None, 9, None]  # a skipped call returns None
    monkeypatch.undo()
    for name in ("cv_e2e_helper", "cv_e2e_step"):
        sys.modules.pop(name, None)


# Operations on a small table kept as Parquet files; the model is the list of rows and whether it has "extra".
OPS = st.sampled_from(["append", "delete", "overwrite same", "reorder", "schema", "record"])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, min_size=3, max_size=7), seed=st.integers(0, 1000))
def test_changed_exactly_when_the_fingerprint_differs(spark, tmp_path_factory, ops, seed):
    import random

    rnd = random.Random(seed)
    root = tmp_path_factory.mktemp("prop")
    path, store = str(root / "t"), str(root / "store")
    rows, extra = [(i, f"r{i}") for i in range(5)], False

    def write(order, files):
        df = spark.createDataFrame(order, "id INT, name STRING")
        if extra:
            df = df.selectExpr("*", "id % 3 AS extra")
        df.repartition(files).write.mode("overwrite").parquet(path)

    write(rows, 1)
    recorded = dsha.record([path], store=store, name="step").inputs[path].fingerprint
    for op in ops:
        if op == "append":
            rows = rows + [(rnd.randrange(100), "new")]
        elif op == "delete" and rows:
            rows = rows[: -1]
        elif op == "schema":
            extra = not extra
        if op != "record":
            write(rnd.sample(rows, len(rows)) if op == "reorder" else rows, rnd.randint(1, 3))
        now = dsha.fingerprint(spark.read.parquet(path))
        changes = dsha.changed([path], store=store, name="step")
        assert bool(changes) == (now != recorded), (op, changes.explain())
        if op == "record":
            recorded = changes.record().inputs[path].fingerprint


def test_run_if_changed_refuses_a_store_it_could_not_record_into_before_the_step(spark, tmp_path):
    ran = []
    with pytest.raises(dsha.StoreError, match="its parent .* does not exist"):
        with dsha.run_if_changed("step", {"a": spark.range(2)}, store=str(tmp_path / "gone" / "s")):
            ran.append(1)  # old code: ran, then wrote the record under a missing mount's mount point
    assert ran == [] and not (tmp_path / "gone").exists()


def test_the_three_forms_of_the_docs_each_skip_their_second_run(spark, tmp_path):
    """docs/changes.md's example: the three forms, each under its own name, over the same inputs, run twice: the first
    run builds three times, the second not at all (issue 30: under one shared name they never skipped)."""
    spark.range(10).write.parquet(str(tmp_path / "orders"))
    store, inputs, built = str(tmp_path / "store"), {"orders": str(tmp_path / "orders")}, []

    @dsha.skip_if_unchanged(name="daily_report_function", inputs=inputs, store=store)
    def daily_report():
        built.append("function")

    for _ in range(2):
        changes = dsha.changed(inputs, store=store, name="daily_report")
        if changes:
            built.append("ask")
            changes.record()
        with dsha.run_if_changed("daily_report_block", inputs, store=store) as run:
            if not run.should_run:
                run.skip()
            built.append("block")
        daily_report()
    assert built == ["ask", "block", "function"]
