"""The blocks of the documentation site (docs/*.md) that README's rule does not run (they need a cluster, a lake
or TPC-H data: tests/docs/test_readme.py runs README's): each ```python block is valid Python and each ```bash block
valid shell, so that a page never shows code that cannot run as written. Signatures are shown in ```text blocks.
The blocks marked ``<!-- run: arrow -->`` also run, on the Arrow engine (tests/arrow/test_docs_arrow_blocks.py).

    .venv/spark-4.3.0/bin/python -m pytest -q tests/docs/test_docs_blocks.py
"""
from __future__ import annotations

import ast
import glob
import os
import subprocess
from typing import List, Tuple

import pytest
from test_readme import Block, readme_blocks

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def _blocks() -> List[Tuple[str, Block]]:
    found = []
    for path in sorted(glob.glob(os.path.join(DOCS, "*.md"))):
        with open(path, encoding="utf-8") as f:
            found += [(os.path.basename(path), b) for b in readme_blocks(f.read()) if b.language in ("bash", "python")]
    return found


@pytest.mark.parametrize("page, block", _blocks(), ids=lambda x: x if isinstance(x, str) else f"{x.line}-{x.language}")
def test_docs_block_is_valid_code(page: str, block: Block) -> None:
    if block.language == "python":
        ast.parse(block.code, filename=f"docs/{page}:{block.line}")
    else:
        checked = subprocess.run(["bash", "-n", "-c", block.code], capture_output=True, text=True)
        assert checked.returncode == 0, f"docs/{page}:{block.line}: {checked.stderr}"


def test_the_check_fails_invalid_code() -> None:
    with pytest.raises(SyntaxError):
        test_docs_block_is_valid_code("x.md", Block(1, "python", "f(a=1, *, b=2)\n", None))
    with pytest.raises(AssertionError):
        test_docs_block_is_valid_code("x.md", Block(1, "bash", "if true; then echo\n", None))
    assert len(_blocks()) >= 25  # the pages' examples are found
