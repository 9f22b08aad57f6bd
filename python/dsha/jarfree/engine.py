"""Which path computes a session's digests: the jar's functions (``jvm``) or Python on the executors (``python``).

An explicit ``engine=`` argument wins, then the session setting ``spark.dsha.engine`` (``auto``, ``jvm`` or
``python``), then, for ``auto``, whether the session has dsha's functions: asked once per session and remembered.
Choosing the Python path by itself is announced once per session with a :class:`dsha.DshaWarning`.
"""
from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import TYPE_CHECKING, Optional

from dsha.dependencies import installed
from dsha.errors import DshaNotLoadedError, DshaWarning
from dsha.spark.session import has_functions

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["ENGINES", "ENGINE_SETTING", "engine_for"]

ENGINE_SETTING = "spark.dsha.engine"
ENGINES = ("auto", "jvm", "python")

# session -> the engine `auto` chose for it (weak: a stopped session is forgotten with its object)
_auto: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()


def _choose_auto(spark: SparkSessionLike) -> str:
    present = has_functions(spark)  # (a positive answer also serves ensure_loaded)
    if present:
        return "jvm"
    if not (installed("pyarrow") and installed("numpy")):
        raise DshaNotLoadedError(
            "this session has no dsha functions (its server has no dsha jar), and the jar-free path needs pyarrow "
            'and numpy on this machine and on the executors: pip install "./python[arrow]" (or add the dsha jar '
            "to the server: docs/getting-started.md)")
    why = "has no dsha functions" if present is False else "cannot say whether it has dsha functions"
    warnings.warn(f"dsha: this session {why}; digests are computed by Python on the executors (the jar-free path, "
                  f"the same digests; set {ENGINE_SETTING}=jvm to require the jar)", DshaWarning, stacklevel=4)
    return "python"


def engine_for(spark: SparkSessionLike, engine: Optional[str] = None) -> str:
    """``jvm`` or ``python`` for this session: ``engine`` if given, else the session's ``spark.dsha.engine``, else
    ``auto`` (the jar when its functions are there)."""
    chosen = engine
    if chosen is None:
        chosen = spark.conf.get(ENGINE_SETTING, None) or "auto"
    if chosen not in ENGINES:
        where = "engine=" if engine is not None else f"the session setting {ENGINE_SETTING}"
        raise ValueError(f"{where} is {chosen!r}; use one of {', '.join(ENGINES)}")
    if chosen != "auto":
        return chosen
    with contextlib.suppress(KeyError, TypeError):  # not asked yet (or a session that takes no weak reference)
        return _auto[spark]
    found = _choose_auto(spark)
    with contextlib.suppress(TypeError):  # a session object that takes no weak reference: ask again next time
        _auto[spark] = found
    return found
