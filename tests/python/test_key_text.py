"""Key text (SPEC.md §16.2) is taken exactly as the jar reads it, or refused in one line that names the reason and
never the key: Python's ``key=`` and the CLI's ``--key-file`` trim only ASCII spaces and controls (a U+00A0 no-break
space was stripped by Python alone, silently), and refuse ``0x`` + hex and an odd number of hex digits, which the
jar would read as base64 keys of other bytes (49 and 47 bytes for 64 and 63 digits)."""
import os

import pytest
from cli_runner import run_cli

import dsha
from dsha.core.key_text import checked_key_text

KEY = bytes(range(100, 132))
HEX = KEY.hex()
NBSP = "\u00a0"


def test_ascii_spaces_and_controls_are_trimmed_and_nothing_else():
    assert checked_key_text(f" \t{HEX}\r\n") == HEX
    assert checked_key_text("\x00\x1f" + HEX + "\x20") == HEX
    with pytest.raises(ValueError) as e:
        checked_key_text(HEX + NBSP)
    assert str(e.value) == ("the key holds U+00A0 (NO-BREAK SPACE) at its end: key text is hex or base64 (ASCII), "
                            "taken as written; remove the character (only ASCII spaces and controls are trimmed)")
    with pytest.raises(ValueError, match=r"^the key holds U\+00A0 \(NO-BREAK SPACE\) at its start: "):
        checked_key_text(NBSP + HEX)
    with pytest.raises(ValueError, match=r"^k holds U\+2003 \(EM SPACE\) at character 5: "):
        checked_key_text(HEX[:4] + "\u2003" + HEX[4:], "k")
    with pytest.raises(ValueError, match=r"^the key holds U\+00E9 \(LATIN SMALL LETTER E WITH ACUTE\) at character 3"):
        checked_key_text("ab\u00e9" + HEX)


def test_0x_and_odd_hex_are_refused_not_read_as_base64():
    with pytest.raises(ValueError) as e:
        checked_key_text("0x" + HEX)
    assert str(e.value) == ("the key is hex with a 0x prefix, which dsha would read as base64 (another key): give the "
                            "64 hex digits without 0x")
    with pytest.raises(ValueError, match="^the key is hex with a 0x prefix.* the 64 hex digits"):
        checked_key_text(" 0X" + HEX.upper() + "\n")
    with pytest.raises(ValueError) as e:
        checked_key_text(HEX[:-1])
    assert str(e.value) == ("the key is 63 hex digits, an odd number, which dsha would read as base64 (another key): "
                            "hex keys are whole bytes, two digits each")
    # base64 that starts with 0x but is not all hex digits after it: a base64 key, as the jar reads it
    assert checked_key_text("0xZ" + HEX[3:]) == "0xZ" + HEX[3:]


def test_python_key_is_refused_before_spark_and_taken_exactly_otherwise(spark):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, s STRING")
    expected = dsha.fingerprint(df, key=KEY).digest
    assert dsha.fingerprint(df, key=f"  {HEX}\n").digest == expected
    for text, reason in ((HEX + NBSP, "U+00A0"), ("0x" + HEX, "0x prefix"), (HEX[:-1], "63 hex digits")):
        with pytest.raises(ValueError) as e:
            dsha.fingerprint(df, key=text)
        message = str(e.value)
        assert message.startswith("the key (key=) ") and reason in message, message
        assert HEX[4:20] not in message and "\n" not in message


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="the CLI is tested in the classic pass")
def test_key_file_is_checked_the_same_way(tmp_path):
    data = tmp_path / "data.csv"  # never read: the key file is refused before any input is
    data.write_text("a\n1\n")
    key = tmp_path / "key"
    for content, reason in (((HEX + NBSP + "\n").encode(), "holds U+00A0 (NO-BREAK SPACE) at its end"),
                            (("0x" + HEX + "\n").encode(), "hex with a 0x prefix"),
                            ((HEX[:-1] + "\n").encode(), "63 hex digits, an odd number")):
        key.write_bytes(content)
        out = run_cli("hash", data, "--key-file", key)
        assert out.returncode == 2 and out.stdout == "", out
        assert out.stderr.startswith(f"dsha: error: the key file {key} ") and reason in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and HEX[4:20] not in out.stderr


def test_key_references_are_split_and_trimmed_as_the_jar_does():
    """``conf:NAME#ALGORITHM``: split at the last ``#``, each part trimmed of ASCII spaces and controls only (Java's
    String.trim, KeyArgument.Reference), the same for the algorithm ``algorithm=`` checks against and for the jar-free
    path's setting name: a U+00A0 stays (then an unknown algorithm, as the jar says), a \\x01 goes."""
    from dsha.core.algorithms import algorithm_id, named_algorithm
    from dsha.core.key_text import key_reference_parts

    assert key_reference_parts("conf:k") == ("k", None)
    assert key_reference_parts("conf: a#b #\tdsha-keyed-v2\x01") == ("a#b", "dsha-keyed-v2")
    assert named_algorithm("conf:k#dsha-keyed-v2\x01 ") == "dsha-keyed-v2"
    assert algorithm_id(None, "conf:k# dsha-keyed-v2\x1f") == "dsha-keyed-v2"
    assert named_algorithm(f"conf:k#{NBSP}dsha-keyed-v2") == f"{NBSP}dsha-keyed-v2"
    with pytest.raises(ValueError, match="unknown dsha algorithm"):
        algorithm_id(None, f"conf:k#dsha-keyed-v2{NBSP}")
    assert named_algorithm("conf:k") is None and named_algorithm(HEX) is None
