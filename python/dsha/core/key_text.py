"""A key given as text (SPEC.md §16.2), checked before it is handed over: taken exactly as the jar reads it, or refused
in one line that never shows the key.

The jar trims the characters U+0000 to U+0020 from both ends and nothing else, then reads hex, else base64. Python's
``key=`` and the CLI's ``--key-file`` follow the same trim, and refuse two spellings the jar would read as another key
than the one meant: ``0x`` followed by hex digits (base64 to the jar: 66 characters are a key of 49 bytes), and an
odd number of hex digits from 22 on, where base64 makes a key (63 digits: a key of 47 bytes); and any character that
is not ASCII (a U+00A0 no-break space pasted at an end is named, not stripped as Python alone once did).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional, Tuple

__all__ = ["ASCII_TRIM", "checked_key_text", "key_reference_parts"]

ASCII_TRIM = "".join(map(chr, range(0x21)))  # what Java's String.trim removes, as the jar does
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]+")
_PREFIXED_HEX = re.compile(r"0[xX][0-9a-fA-F]+")


def _character(c: str) -> str:
    return f"U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})"


def checked_key_text(text: str, what: str = "the key") -> str:
    """``text`` without the ASCII spaces and controls at its ends (SPEC.md §16.2, rule 1), or a ``ValueError`` naming
    ``what`` and the problem (never the key): a character that is not ASCII, a ``0x`` prefix, an odd number of hex
    digits."""
    t = text.strip(ASCII_TRIM)
    for i, c in enumerate(t):
        if ord(c) > 0x7F:
            where = "at its start" if i == 0 else "at its end" if i == len(t) - 1 else f"at character {i + 1}"
            raise ValueError(f"{what} holds {_character(c)} {where}: key text is hex or base64 (ASCII), taken as "
                             "written; remove the character (only ASCII spaces and controls are trimmed)")
    if _PREFIXED_HEX.fullmatch(t):
        raise ValueError(f"{what} is hex with a 0x prefix, which dsha would read as base64 (another key): give the "
                         f"{len(t) - 2} hex digits without 0x")
    if _HEX_DIGITS.fullmatch(t) and len(t) % 2 and len(t) >= 22:  # shorter: too short as base64 too (16 bytes)
        raise ValueError(f"{what} is {len(t)} hex digits, an odd number, which dsha would read as base64 (another "
                         "key): hex keys are whole bytes, two digits each")
    return t


def key_reference_parts(text: str) -> Tuple[str, Optional[str]]:
    """The setting name and the algorithm (None when not named) of a key reference ``conf:NAME`` or
    ``conf:NAME#ALGORITHM`` (SPEC.md §16.2), read as the jar reads it: split at the last ``#``, each part trimmed of
    ASCII spaces and controls only (Java's ``String.trim``), so that both paths name the same setting and algorithm."""
    if not text.startswith("conf:"):
        raise ValueError("a key reference starts with conf:")
    name, hash_, algorithm = text[len("conf:"):].rpartition("#")
    if not hash_:
        return algorithm.strip(ASCII_TRIM), None
    return name.strip(ASCII_TRIM), algorithm.strip(ASCII_TRIM)
