"""Every exception and warning class of dsha, in one place (the lowest layer: it imports nothing of dsha).

The public ones are also names of the ``dsha`` package (``dsha.StateError``, ``dsha.DshaWarning``, ...)."""
from __future__ import annotations

import warnings
from typing import Iterable, List

__all__ = ["DiffError", "DshaNotLoadedError", "DshaWarning", "MissingDependencyError", "StateError", "StoreError",
           "TableNotFoundError", "UnsupportedSparkError", "UnsupportedTypeError", "UsageError", "warn"]


class DshaWarning(UserWarning):
    """Something a user should know about a result that is still exact (e.g. an untrusted manifest was ignored)."""


class DshaNotLoadedError(RuntimeError):
    """The session has no dsha functions: the jar or the spark.sql.extensions setting is missing."""


class UnsupportedSparkError(FileNotFoundError):
    """No bundled jar serves the installed Spark (its line or its Scala version)."""


class StateError(ValueError):
    """A byte string that is not a dsha state, or states that cannot be merged (different schemas or algorithms)."""


class StoreError(Exception):
    """A store entry that is corrupt, foreign or of another version, or a store that cannot be used."""


class DiffError(ValueError):
    """A diff that cannot be computed as asked: a missing key or column, DataFrames of different sessions."""


class UnsupportedTypeError(ValueError):
    """An Arrow type (or value) that dsha-v1 cannot hash; the message names the column path and the Arrow type."""


class UsageError(Exception):
    """A problem with what the user asked for (a missing input file, flags that do not go together), reported by the
    command line in one line."""


class TableNotFoundError(LookupError):
    """A table or view that the session's catalog does not have (Spark's ``TABLE_OR_VIEW_NOT_FOUND``, raised from
    it), in one line with the catalog's closest names.

    Where pyspark 3.4 or later is installed, what dsha raises is also pyspark's ``AnalysisException`` (a subclass of
    both, made where dsha imports pyspark: ``import dsha`` needs no pyspark), so ``except AnalysisException`` and
    ``except dsha.TableNotFoundError`` both catch it; without pyspark it is this class alone. It is raised where dsha
    reads a table by its name (``dsha.Table("t")`` or ``"table:t"`` inputs of ``dsha.changed``/``dsha.record``, the
    CLI's ``table:`` and ``--table``) and for a Spark Connect ``spark.table("t")``, which Spark reads only when dsha's
    query runs. A classic ``spark.table("typo")`` fails in pyspark (its own ``AnalysisException``, no closest names)
    before ``dsha.fingerprint`` is called."""


class MissingDependencyError(ModuleNotFoundError):
    """An optional dependency (pyspark, pyarrow, ...) that the called function needs is not installed."""


def warn(messages: Iterable[object]) -> List[str]:
    """Each message as a :class:`DshaWarning` (attributed to the caller of the function that calls this); the
    messages, as strings."""
    out = [str(m) for m in messages]
    for m in out:
        warnings.warn(m, DshaWarning, stacklevel=3)
    return out
