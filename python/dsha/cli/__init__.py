"""The `dsha` command: hash a table or compare two, on an embedded local Spark, a cluster, the caller's session
(``main(argv, spark=...)``), or without Spark (the Arrow engine).

    dsha hash PATH [--format F] [--columns a,b] [--master URL] [--json] [--engine auto|arrow|spark]
    dsha hash --table NAME
    dsha compare A B           exit 0 equal, 1 different, 2 error
    dsha diff A B [--key k]    exit 0 equal, 1 different, 2 error
    --engine arrow: dsha.arrow, no Spark and no JVM (local Parquet, ORC, Arrow IPC, CSV, JSON files)
    dsha check|record NAME INPUT... --store S

Errors are one ``dsha: error:`` line on stderr (exit 2), checked before Spark starts where they can be; Ctrl-C is one
``dsha: interrupted`` line (exit 130), with the Spark the command started ended (``processes``).

One module per command (``hash``, ``compare``, ``diff``, ``store``: check and record), the parser (``parser``),
the engine choice (``engine``), the session, owned or borrowed (``session``), the processes an owned session
started (``processes``), what is printed (``output``) and the exit codes (``exit_codes``). Nothing else in dsha
imports this package.
"""
from __future__ import annotations

from dsha.cli.app import main

__all__ = ["main"]
