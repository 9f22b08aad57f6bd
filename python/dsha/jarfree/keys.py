"""Keys on the jar-free path (SPEC.md §16.2): what ``key=`` gives, read into bytes on the driver, and what travels to
the executors.

``key=`` takes what the jar's path takes: bytes, hex or base64 text, or ``conf:NAME`` (``#ALGORITHM``), a session
setting holding key text — read once, removed from the session at once (Spark copies settings into every job's
properties, which event logs print) and kept in this process for that session alone, as the jar keeps it in the
driver. The bytes are held by a ``Secret``, which prints as ``<key>``.

What the executors need travels inside the Python function ``mapInArrow`` sends them (pickled, in the task's command
bytes; over Spark Connect, in the plan request to the server first): for dsha-keyed-v1 the key itself (HMAC needs it),
for dsha-keyed-v2 only the table's subkey seed (HMAC-SHA-256 under the key of the schema digest, SPEC.md §16.6, which
gives the subkeys of that schema and not the key). Nothing of it enters a plan's text, a setting or a job's
description: the plan names the function, not what it holds.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from dsha.arrow._tamper import subkey_seed
from dsha.core.key_bytes import key_bytes
from dsha.core.key_text import ASCII_TRIM, checked_key_text, key_reference_parts

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["Secret", "executor_secret", "read_key"]

# session -> {setting name: key}: conf:NAME keys read on the jar-free path (weak: forgotten with the session); a
# session that takes no weak reference or is not hashable (Spark Connect's) by its session id instead
_kept: weakref.WeakKeyDictionary[Any, Dict[str, bytes]] = weakref.WeakKeyDictionary()
_kept_by_id: Dict[str, Dict[str, bytes]] = {}


def _kept_for(spark: Any) -> Dict[str, bytes]:
    try:
        return _kept.setdefault(spark, {})
    except TypeError:
        return _kept_by_id.setdefault(str(getattr(spark, "session_id", id(spark))), {})


class Secret:
    """Key material that never prints: ``repr``/``str`` give ``<key>``; ``reveal()`` the bytes."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes):
        self._value = bytes(value)

    def reveal(self) -> bytes:
        return self._value

    def __repr__(self) -> str:
        return "<key>"

    __str__ = __repr__


def _unquoted(value: str) -> str:
    """A setting's value without one pair of matching quotes (``SET NAME = '…'`` keeps them), as the jar reads it."""
    t = value.strip(ASCII_TRIM)
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    return t


def _setting_key(spark: SparkSessionLike, name: str) -> bytes:
    what = f"the key of conf:{name}"
    value = spark.conf.get(name, None)
    if value is not None:
        spark.conf.unset(name)  # before anything can fail: the setting never outlives this call
        raw = key_bytes(checked_key_text(_unquoted(value), what), what)
        _kept_for(spark)[name] = raw
        return raw
    kept = _kept_for(spark)
    if name in kept:
        return kept[name]
    jar = (" (a server with the dsha jar keeps spark.dsha.secret.* settings in its JVM, out of Python's reach: there "
           "use engine='jvm', or give the key itself)") if name.startswith("spark.dsha.secret.") else ""
    raise ValueError(f"conf:{name}: the setting {name} is not set in this session (on the jar-free path a conf: key "
                     f"is the session setting of that name, read once and then kept for this session){jar}")


def read_key(spark: SparkSessionLike, key: Any) -> Tuple[Secret, Optional[str]]:
    """The key's bytes and the algorithm a ``conf:NAME#ALGORITHM`` reference names (else None)."""
    if isinstance(key, str) and key.startswith("conf:"):
        name, algorithm = key_reference_parts(key)  # conf:NAME# names the algorithm "": refused, as by the jar
        return Secret(_setting_key(spark, name)), algorithm
    return Secret(key_bytes(key)), None


def executor_secret(algorithm: str, key: Secret, schema_digest: bytes) -> Secret:
    """What the executors need of the key: the key (dsha-keyed-v1), the table's subkey seed (dsha-keyed-v2)."""
    if algorithm == "dsha-keyed-v2":
        return Secret(subkey_seed(key.reveal(), schema_digest))
    return key
