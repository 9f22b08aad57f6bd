"""A key's bytes (SPEC.md §16.2) where dsha computes keyed digests itself, without the jar: the Arrow engine, the
jar-free path and the CLI's ``--key-file`` on the Arrow engine. Key text is read as the jar reads it (trimmed and
checked by ``key_text.checked_key_text``, then hex, else base64); every error names the setting and the problem,
never the key."""
from __future__ import annotations

import base64
import re
from typing import Union

from dsha.core.key_text import checked_key_text

__all__ = ["MIN_KEY_BYTES", "key_bytes"]

MIN_KEY_BYTES = 16
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def _text_bytes(text: str, what: str) -> bytes:
    if _HEX.fullmatch(text):
        return bytes.fromhex(text)
    if not _BASE64.fullmatch(text):
        raise ValueError(f"{what} is neither hex nor base64")
    chars = text.rstrip("=").replace("-", "+").replace("_", "/")
    if len(chars) % 4 == 1:
        raise ValueError(f"{what} is base64 of {len(chars)} characters, which spells no whole byte (one more than a "
                         "multiple of 4)")
    # RFC 4648 of that length padded to a multiple of 4; bits left over in the last character are ignored
    return base64.b64decode(chars + "=" * (-len(chars) % 4))


def key_bytes(key: Union[bytes, bytearray, memoryview, str], what: str = "the key (key=)") -> bytes:
    """The bytes of ``key``: bytes as they are, or hex/base64 text (SPEC.md §16.2); at least 16 bytes. A
    ``conf:NAME`` reference is a name, not a key: the caller resolves it first."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    elif isinstance(key, str):
        if key.startswith("conf:"):
            raise ValueError(f"{what} is a conf:NAME reference, which names a key kept by a Spark session; give the "
                             "key itself here (bytes, or hex/base64 text)")
        raw = _text_bytes(checked_key_text(key, what), what)
    else:
        raise TypeError(f"{what}: a dsha key is bytes or a hex/base64 str, not {type(key).__name__}")
    if len(raw) < MIN_KEY_BYTES:
        raise ValueError(f"{what} has {len(raw)} bytes: a key needs at least {MIN_KEY_BYTES} (32 random bytes are "
                         "recommended)")
    return raw
