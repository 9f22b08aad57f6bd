"""README.md verbatim is a test: every ```bash and ```python block of README.md runs as it is written, and the output
it shows is the output it prints.

- A ```bash block runs in ``bash`` with errexit and pipefail, the test environment's ``bin`` first on PATH (``python``,
  ``pip`` and ``dsha`` are the environment's), in a new temporary working directory.
- A ```python block runs in a fresh interpreter of the environment, in a new temporary working directory.
- Output: the lines ``#> TEXT`` of a block are, in order, every line the block prints on stdout; ``...`` in one
  stands for any text. A block without ``#>`` lines must only succeed.
- A block preceded by ``<!-- not run: REASON -->`` is not run: it is reported as a skipped test with its reason
  (``pytest -rs`` lists them), and ``test_few_blocks_are_not_run`` keeps them few.

    .venv/spark-4.3.0/bin/python -m pytest -q -rs tests/docs    (dev/run: "README blocks, verbatim")
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import List, Optional

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
RUNNABLE = ("bash", "python")
NOT_RUN = re.compile(r"^<!-- not run: (?P<reason>.+) -->$")
OUTPUT = re.compile(r"^#> ?(?P<line>.*)$")
MAX_NOT_RUN = 1  # the set-up block (dev/run demo/test): the test plan itself


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: Optional[str]  # the reason, when marked <!-- not run: ... -->

    @property
    def expected(self) -> List[str]:
        return [m.group("line") for m in map(OUTPUT.match, self.code.splitlines()) if m]


def readme_blocks(text: str) -> List[Block]:
    """The fenced blocks of a Markdown text, with the language of their fence and the marker before them if any."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = NOT_RUN.match(before.strip())
        blocks.append(Block(i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n",
                            marker.group("reason") if marker else None))
        i = end + 1
    return blocks


def matches(expected: str, actual: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, expected.split("..."))), actual) is not None


def _blocks() -> List[Block]:
    with open(README, encoding="utf-8") as f:
        return [b for b in readme_blocks(f.read()) if b.language in RUNNABLE]


def _environment() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)  # the package as installed in the environment, as a reader has it
    return env


@pytest.mark.parametrize("block", _blocks(), ids=lambda b: f"README.md:{b.line}-{b.language}")
def test_block_runs_as_written(block: Block, tmp_path) -> None:
    if block.not_run:
        pytest.skip(f"README.md:{block.line} not run: {block.not_run}")
    command = ["bash", "-eo", "pipefail", "-c", block.code] if block.language == "bash" else [sys.executable, "-c",
                                                                                             block.code]
    done = subprocess.run(command, cwd=tmp_path, env=_environment(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)
    where = f"README.md:{block.line} ({block.language})"
    assert done.returncode == 0, f"{where} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-4000:]}"
    printed = done.stdout.splitlines()
    if block.expected:
        assert len(printed) == len(block.expected) and all(map(matches, block.expected, printed)), (
            f"{where} printed\n" + "\n".join(printed) + "\nbut README shows\n" + "\n".join(block.expected))


def test_few_blocks_are_not_run() -> None:
    """The blocks marked not run, listed; at most MAX_NOT_RUN of them (the README's examples run as written)."""
    skipped = [b for b in _blocks() if b.not_run]
    print(f"{len(skipped)} README block(s) not run: " + "; ".join(f"line {b.line}: {b.not_run}" for b in skipped))
    assert len(skipped) <= MAX_NOT_RUN, [b.line for b in skipped]
    assert len(_blocks()) - len(skipped) >= 4, "README's examples run in the test plan"


def test_the_reader_of_blocks() -> None:
    """The reader itself: fences, languages, markers and expected lines, on a small text."""
    text = ("intro\n```bash\necho hi\n#> hi\n```\n\n<!-- not run: needs a cluster -->\n\n```python\nx = 1\n```\n"
            "```sql\nSELECT 1\n```\n")
    blocks = readme_blocks(text)
    assert [(b.line, b.language, b.not_run) for b in blocks] == [(2, "bash", None), (9, "python", "needs a cluster"),
                                                                   (12, "sql", None)]
    assert blocks[0].expected == ["hi"] and blocks[0].code == "echo hi\n#> hi\n"
    assert matches(".../dsha/jars/x.jar", "/a/b/dsha/jars/x.jar") and not matches("a...b", "abc")
    assert matches("f81b...", "f81b4f50") and not matches("1000", "10000")


@pytest.mark.parametrize("language, code", [
    ("bash", "echo 42\n#> 41\n"),              # output other than shown
    ("bash", "false\necho ok\n#> ok\n"),       # a failing command before the last one
    ("python", "print(1)\nprint(2)\n#> 1\n"),  # a line printed that the block does not show
    ("python", "import no_such_module_of_dsha\n"),
])
def test_the_runner_fails_a_block_that_does_not_do_what_it_shows(language: str, code: str, tmp_path) -> None:
    with pytest.raises(AssertionError):
        test_block_runs_as_written(Block(1, language, code, None), tmp_path)
