"""Keys of the keyed digests (SPEC.md §16.2): handed to Spark's driver for the session, never in a query or a
setting that outlives the call."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Union

from dsha.core.algorithms import KEYED_NAMES, named_algorithm
from dsha.core.key_text import checked_key_text
from dsha.dependencies import F
from dsha.spark.session import ensure_loaded, is_connect

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["Key", "key_reference", "keyed_id"]

Key = Union[bytes, bytearray, str]


def _key_text(key: Key) -> Optional[str]:
    """The key as hex or base64 text, or None for a ``"conf:NAME"`` reference to a key already given. A str is taken
    as the jar reads it (``checked_key_text``: ASCII spaces trimmed, nothing else) or refused in one line."""
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).hex()
    if isinstance(key, str):
        return None if key.startswith("conf:") else checked_key_text(key, "the key (key=)")
    raise TypeError(f"a dsha key is bytes or a hex/base64 str, not {type(key).__name__}")


def _handed_over(spark: SparkSessionLike, text: str) -> str:
    """Gives the key to the driver, which keeps it for this session alone under a name no one can guess, and returns
    that name. Classic: through Py4J, never a setting. Spark Connect (no Py4J): a setting under a random name, read
    and removed by the analysis of a one-row query run at once (no job runs, so no job's properties hold it)."""
    ensure_loaded(spark)
    if not is_connect(spark):
        jvm: Any = spark.sparkContext._jvm  # type: ignore[union-attr]
        return str(jvm.io.dsha.registration.KeyArgument.rememberText(spark._jsparkSession, text))  # type: ignore
    name = "spark.dsha.secret.handle." + os.urandom(16).hex()
    spark.conf.set(name, text)
    try:
        _ = spark.range(0).agg(F.call_function("dsha_keyed_state", F.lit("conf:" + name), F.col("id"))).schema
    finally:
        if spark.conf.get(name, None) is not None:
            spark.conf.unset(name)
    return name


def key_reference(spark: SparkSessionLike, key: Key, algorithm: Optional[str] = None) -> str:
    """The key argument, ``conf:NAME``, of a key handed to Spark's driver for this session (``_handed_over``): the
    key itself never enters a query plan, nor a session setting once this returns, and another session cannot use
    it by its name.

    ``algorithm`` (a keyed algorithm's id) is named with the key, ``conf:NAME#ALGORITHM``: the call gets that
    algorithm whatever the session's setting ``spark.dsha.keyed.algorithm``, which every thread shares, says."""
    suffix = "" if algorithm is None else "#" + algorithm
    text = _key_text(key)
    if text is None:
        named = named_algorithm(key)
        if named is None:
            return str(key) + suffix
        if algorithm is not None and named != algorithm:
            raise ValueError(f"the key reference names the algorithm {named!r}, and algorithm= asks for {algorithm!r}")
        return str(key)
    return "conf:" + _handed_over(spark, text) + suffix


def keyed_id(algorithm: Optional[str]) -> Optional[str]:
    """The keyed algorithm id of a Column function's ``algorithm=`` (None: the session's setting decides)."""
    if algorithm is None:
        return None
    if algorithm in KEYED_NAMES:
        return KEYED_NAMES[algorithm]
    raise ValueError(f"unknown keyed algorithm {algorithm!r}: use 'keyed' (dsha-keyed-v1) or 'keyed-v2' "
                     "(dsha-keyed-v2)")
