"""Phase lines (dsha.core.phases): a line per step with its time, only where a reporter is active; the command line
activates one when stderr is a terminal (not with --quiet or --json) or when asked (--phases)."""
import io
import os
import pty
import re
import subprocess
import sys
import warnings
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq

import dsha.arrow
from dsha.core.phases import Phases, reporting, step, timed, wanted
from dsha.errors import DshaWarning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_decision():
    assert wanted(Terminal()) is True
    assert wanted(io.StringIO()) is False  # a pipe, a file, a log
    assert wanted(Terminal(), quiet=True) is False  # --quiet, --json
    assert wanted(io.StringIO(), asked=True) is True  # --phases
    assert wanted(object()) is False  # no isatty at all
    closed = io.StringIO()
    closed.close()  # isatty raises ValueError
    assert wanted(closed) is False
    primary, secondary = pty.openpty()  # a real terminal device
    try:
        with os.fdopen(secondary, "w", closefd=False) as tty:
            assert wanted(tty) is True
    finally:
        os.close(primary)
        os.close(secondary)


def test_steps_print_one_line_each_with_their_time_only_when_reported():
    ticks = iter([10.0, 12.345, 20.0, 20.5])
    out = io.StringIO()

    @timed("read the differing rows")
    def fetch():
        return 42

    with reporting(Phases(out, clock=lambda: next(ticks))):
        with step("sketch both sides, decode the difference"):
            pass
        assert fetch() == 42
    assert out.getvalue() == ("dsha: sketch both sides, decode the difference: 2.35 s\n"
                              "dsha: read the differing rows: 0.50 s\n")
    silent = io.StringIO()
    with step("not reported"):  # no reporter: nothing, and no clock read
        pass
    assert fetch() == 42 and silent.getvalue() == ""
    with reporting(None):
        assert fetch() == 42
    instant = io.StringIO()  # a step whose work was done before (no job ran) is not worth a line
    ticks = iter([5.0, 5.004, 6.0, 6.02])
    with reporting(Phases(instant, clock=lambda: next(ticks))):
        with step("count the differing values per column"):
            pass
        with step("read the rows shown"):
            pass
    assert instant.getvalue() == "dsha: read the rows shown: 0.02 s\n"


# The phase lines of a real `python -m dsha` process (the Arrow engine: no JVM, about a second each): on the terminal
# its stderr is, never on stdout; nothing of them when stderr is a file and --phases is not given.
PHASE = re.compile(r"^dsha: (.+): \d+\.\d\d s$")


def _dsha(*args, stderr):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))  # this checkout's dsha, not an installed one
    return subprocess.run([sys.executable, "-m", "dsha", *map(str, args)], stdout=subprocess.PIPE, stderr=stderr,
                          stdin=subprocess.DEVNULL, env=env, timeout=120, check=False)


def _on_a_terminal(*args):
    """Runs dsha with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    primary, secondary = pty.openpty()
    try:
        done = _dsha(*args, stderr=secondary)
        os.close(secondary)
        secondary = -1
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO: the terminal's other side is closed and all was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    return done.returncode, done.stdout.decode(), shown.decode().replace("\r\n", "\n")


def _phases(text):
    """The phase lines a person sees: of each line, what follows its last carriage return (the progress count,
    redrawn in place, is cleared before a step's line)."""
    seen = [line.rsplit("\r", 1)[-1].replace("\033[K", "") for line in text.split("\n")]
    return [m.group(1) for m in map(PHASE.match, seen) if m]


def test_a_real_process_shows_its_phases_on_the_terminal_only(tmp_path):
    data = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": list(range(5000)), "s": [str(i) for i in range(5000)]}), data)
    digest = dsha.arrow.fingerprint(str(data)).digest
    code, out, shown = _on_a_terminal("hash", data, "--engine", "arrow")
    assert code == 0, shown
    assert out.splitlines()[0] == digest and "dsha:" not in out
    assert _phases(shown) == [f"digest {data}"], shown
    store = tmp_path / "store"
    code, out, shown = _on_a_terminal("record", "daily", data, "--store", store, "--create-store", "--engine", "arrow")
    assert code == 0, shown
    assert out == f"{digest}  {data}  (5000 rows)\n"
    assert f"digest {data}" in _phases(shown) and f"recorded daily in {store}" in shown, shown
    # stderr a file, --phases not given: no phase line (the record's own line is not one)
    with open(tmp_path / "err", "w+b") as err:
        done = _dsha("check", "daily", data, "--store", store, "--engine", "arrow", stderr=err)
        err.seek(0)
        written = err.read().decode()
    assert done.returncode == 0 and done.stdout.decode().startswith("unchanged since "), written
    assert _phases(written) == [] and written == "", written


def _rows_of(table):
    return Counter(tuple(sorted(r.items())) for r in table.to_pylist())


def test_the_arrow_diffs_steps_each_pass_and_the_fallback(tmp_path):
    from dsha.arrow.diff import diff

    left = pa.table({"id": list(range(300)), "v": [i % 7 for i in range(300)]})
    right = pa.table({"id": list(range(100, 400)), "v": [i % 7 for i in range(100, 400)]})
    expected_left = _rows_of(left) - _rows_of(right)
    expected_right = _rows_of(right) - _rows_of(left)
    for cells, max_cells, steps in [
            (49152, 786432, ["sketch both sides, decode the difference", "read the differing rows"]),
            # 16 cells cannot decode 200 differing rows, a sketch of at most 16 is all that is allowed: the fallback
            (16, 16, ["sketch both sides, decode the difference", "count every row digest of both inputs",
                      "read the differing rows"])]:
        out = io.StringIO()
        with reporting(Phases(out, shortest=0.0)), warnings.catch_warnings():
            warnings.simplefilter("ignore", DshaWarning)  # the fallback's warning
            d = diff(left, right, cells=cells, max_cells=max_cells)
        assert [line.rsplit(": ", 1)[0] for line in out.getvalue().splitlines()] == [f"dsha: {s}" for s in steps]
        assert (_rows_of(d.only_left), _rows_of(d.only_right)) == (expected_left, expected_right)
        assert d.method.startswith("sketch" if cells == 49152 else "join")  # which path ran: the steps say the same


def test_a_real_arrow_diff_shows_its_phases_on_the_terminal_only(tmp_path):
    left, right = tmp_path / "left.parquet", tmp_path / "right.parquet"
    n = 400_000  # enough rows for each step to take more than 10 ms (shorter ones get no line): reading the
    # differing rows of 200,000 took 20 ms here
    ids = pa.array(range(n), pa.int64())
    pq.write_table(pa.table({"id": ids, "s": ids.cast(pa.string())}), left)
    pq.write_table(pa.table({"id": ids, "s": [str(i) if i % 80_000 else "x" for i in range(n)]}), right)
    code, out, shown = _on_a_terminal("diff", left, right, "--engine", "arrow")
    assert code == 1, shown  # different
    assert out.splitlines()[:2] == [f"{dsha.arrow.fingerprint(str(left)).digest}  {left}",
                                    f"{dsha.arrow.fingerprint(str(right)).digest}  {right}"], out
    steps = _phases(shown)
    assert steps[:2] == ["sketch both sides, decode the difference", "read the differing rows"], shown
    assert set(steps[2:]) <= {"count the differing values per column", "read the rows shown"}, shown  # under 10 ms
    assert "dsha:" not in out
    # stderr a file: the same stdout, no phase line (only the time line)
    with open(tmp_path / "err", "w+b") as err:
        done = _dsha("diff", left, right, "--engine", "arrow", stderr=err)
        err.seek(0)
        written = err.read().decode()
    assert done.returncode == 1 and done.stdout.decode() == out, written
    assert _phases(written) == [] and written.startswith("time: ") and written.count("\n") == 1, written
