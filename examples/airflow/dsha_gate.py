"""The decision of an Airflow short-circuit task: should the step run? From `dsha check`'s exit code.

Kept free of Airflow imports so that it can be tested (and reused by other schedulers) on its own.
"""
from __future__ import annotations

import subprocess
import sys
from typing import List, Sequence

UNCHANGED, CHANGED = 0, 1


def check_command(step: str, inputs: Sequence[str], store: str, extra: Sequence[str] = ()) -> List[str]:
    return [sys.executable, "-m", "dsha", "check", step, *inputs, "--store", store, "--quiet", *extra]


def record_command(step: str, inputs: Sequence[str], store: str, extra: Sequence[str] = ()) -> List[str]:
    return [sys.executable, "-m", "dsha", "record", step, *inputs, "--store", store, "--quiet", *extra]


def inputs_changed(step: str, inputs: Sequence[str], store: str, extra: Sequence[str] = ()) -> bool:
    """True: run the step (its inputs changed, or it was never recorded). False: skip it. An error of dsha check
    (exit 2: a bad store, a missing input) raises, so the task fails instead of silently skipping or running."""
    done = subprocess.run(check_command(step, inputs, store, extra), capture_output=True, text=True)
    print(done.stdout, end="")
    if done.returncode == UNCHANGED:
        return False
    if done.returncode == CHANGED:
        return True
    raise RuntimeError(f"dsha check failed (exit {done.returncode}): {done.stderr.strip()}")
