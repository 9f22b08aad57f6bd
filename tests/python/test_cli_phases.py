"""The phase lines of `dsha hash`, `compare`, `record` and `check` on the Spark engine (core/phases): each step the
command runs, named, with its time, on stderr when asked (--phases) — as on a terminal, where a real process shows
them unasked (tests/arrow/test_phases.py) — and none otherwise. In-process, on the suite's session: no Spark to start."""
import functools
import os
import re

import pytest
from cli_runner import run_cli

from dsha.core.phases import Phases

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI's steps do not depend on the transport")

PHASE = re.compile(r"^dsha: (.+): \d+\.\d\d s$", re.M)


def test_each_command_names_its_steps(spark, tmp_path, monkeypatch):
    a, b, store = tmp_path / "a", tmp_path / "b", tmp_path / "store"
    spark.range(20).write.parquet(str(a))
    spark.range(21).write.parquet(str(b))
    # every step gets its line, the quick ones too (a store read of a few bytes can take under 10 ms)
    monkeypatch.setattr("dsha.cli.app.Phases", functools.partial(Phases, shortest=0.0))

    def steps(*args):
        out = run_cli(*args, "--engine", "spark", "--phases")
        assert out.returncode in (0, 1), out.stderr
        assert not PHASE.search(out.stdout), out.stdout
        return PHASE.findall(out.stderr)

    assert steps("hash", a) == [f"digest {a} file by file"]  # the per-file route: the listing is part of it
    assert steps("hash", a, "--columns", "id") == [f"plan {a}", f"digest {a}"]
    assert steps("compare", a, b) == ["plan both inputs", "digest both inputs"]
    assert steps("record", "daily", a, "--store", store, "--create-store") == [
        "read the store's last record", f"digest {a} file by file", "write the record to the store"]
    assert steps("check", "daily", a, "--store", store) == ["read the store's last record", f"digest {a} file by file"]
    unasked = run_cli("check", "daily", a, "--store", store, "--engine", "spark")  # stderr not a terminal
    assert unasked.returncode == 0 and not PHASE.search(unasked.stderr), unasked.stderr
