"""Phase lines (dsha.core.phases): a line per step with its time, only where a reporter is active; the command line
activates one when stderr is a terminal (not with --quiet or --json) or when asked (--phases)."""
import io
import os
import pty

from dsha.core.phases import Phases, reporting, step, timed, wanted


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
