"""The command line's exit codes (the one table): what scripts and orchestrators branch on."""
from __future__ import annotations

__all__ = ["CHANGED", "DIFFERENT", "EQUAL", "ERROR", "INTERRUPTED", "OK", "UNCHANGED"]

OK = EQUAL = UNCHANGED = 0  # done; compare/diff: equal; check: nothing changed
DIFFERENT = CHANGED = 1  # compare/diff: different; check: changed, or never recorded (the step has to run)
ERROR = 2  # a usage error, a bad input or store, a failed job
INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + the signal's number, as a shell reports a command the signal ended
