"""Keys of the keyed digests (SPEC.md §16.2): handed to Spark as a redacted session setting, never in a query."""
from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Optional, Tuple, Union

from dsha.core.algorithms import KEYED_NAMES, named_algorithm

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["Key", "key_reference", "key_setting", "keyed_id"]

Key = Union[bytes, bytearray, str]

# Names of key settings: a salted hash of the key (the salt never leaves this process), so one key has one name,
# which says nothing about the key. Spark reads the setting once, when it analyses the query, and removes it from the
# session (SPEC.md §16.2): session settings are copied into every job's properties and event logs.
_SALT = os.urandom(16)


def key_setting(key: Key) -> Optional[Tuple[str, str]]:
    """(setting name, key text) for a key, or None for a ``"conf:NAME"`` reference to a setting already made."""
    if isinstance(key, (bytes, bytearray)):
        text = bytes(key).hex()
    elif isinstance(key, str):
        if key.startswith("conf:"):
            return None
        text = key.strip()
    else:
        raise TypeError(f"a dsha key is bytes or a hex/base64 str, not {type(key).__name__}")
    return "spark.dsha.secret." + hashlib.sha256(_SALT + text.encode()).hexdigest()[:32], text


def key_reference(spark: SparkSessionLike, key: Key, algorithm: Optional[str] = None) -> str:
    """Puts ``key`` in a session setting whose name contains ``secret`` (Spark redacts those) and returns the key
    argument that names it, ``conf:NAME``: the key itself never enters a query plan, not even the parsed one. The
    setting lasts until Spark reads it (analysing the query that uses it), which removes it.

    ``algorithm`` (a keyed algorithm's id) is named with the key, ``conf:NAME#ALGORITHM``: the call gets that
    algorithm whatever the session's setting ``spark.dsha.keyed.algorithm``, which every thread shares, says."""
    suffix = "" if algorithm is None else "#" + algorithm
    setting = key_setting(key)
    if setting is None:
        named = named_algorithm(key)
        if named is None:
            return str(key) + suffix
        if algorithm is not None and named != algorithm:
            raise ValueError(f"the key reference names the algorithm {named!r}, and algorithm= asks for {algorithm!r}")
        return str(key)
    name, text = setting
    spark.conf.set(name, text)
    return "conf:" + name + suffix


def keyed_id(algorithm: Optional[str]) -> Optional[str]:
    """The keyed algorithm id of a Column function's ``algorithm=`` (None: the session's setting decides)."""
    if algorithm is None:
        return None
    if algorithm in KEYED_NAMES:
        return KEYED_NAMES[algorithm]
    raise ValueError(f"unknown keyed algorithm {algorithm!r}: use 'keyed' (dsha-keyed-v1) or 'keyed-v2' "
                     "(dsha-keyed-v2)")
