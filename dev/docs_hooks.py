"""MkDocs hooks of the documentation site (mkdocs.yml): pages that come from the repository, and links to it.

- ``<!-- include: PATH -->`` on a line of its own is replaced by the repository file PATH (docs/spec.md is SPEC.md).
- ``<!-- cli-reference -->`` is replaced by the help of ``dsha`` and of each of its commands, from the CLI's own
  parser (python/dsha/cli/parser.py; importing it imports neither pyspark nor pyarrow), so it cannot drift.
- A link to a file of the repository outside docs/ (``../bench/README.md``, ``tests/golden/vectors.json`` in an
  included file) becomes its path as code: the site holds only docs/. A link to an included file becomes a link to
  the page that includes it. A link to a path that does not exist is a warning, which ``mkdocs build --strict``
  turns into a failure, as it does for links between pages.
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from typing import Any, Dict, List

__all__ = ["on_page_markdown"]

log = logging.getLogger("mkdocs.hooks.dsha")

INCLUDE = re.compile(r"^<!-- include: (?P<path>\S+) -->$", re.MULTILINE)
CLI_REFERENCE = "<!-- cli-reference -->"
LINK = re.compile(r"(?<!!)\[(?P<label>[^\]\n]+)\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def _root(config: Any) -> str:
    return os.path.dirname(os.path.abspath(str(config["config_file_path"])))


def _included_pages(config: Any) -> Dict[str, str]:
    """Repository path -> the docs page that includes it (so links to SPEC.md#x go to spec.md#x)."""
    pages = {}
    docs = config["docs_dir"]
    for name in os.listdir(docs):
        if name.endswith(".md"):
            with open(os.path.join(docs, name), encoding="utf-8") as f:
                for m in INCLUDE.finditer(f.read()):
                    pages[os.path.normpath(m.group("path"))] = name
    return pages


def _outside_fences(text: str, rewrite: Any) -> str:
    """Applies rewrite to the text between fenced code blocks only (code shows links as they are written)."""
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(p if FENCE.match(p) else rewrite(p) for p in parts)


def _rewrite_links(text: str, source_dir: str, page: str, config: Any) -> str:
    """Links from a file in source_dir (a page's folder, or the repository root for an included file)."""
    root, docs = _root(config), os.path.abspath(config["docs_dir"])
    included = _included_pages(config)
    page_dir = os.path.dirname(os.path.join(docs, page))

    def fix(m: re.Match[str]) -> str:
        label, target = m.group("label"), m.group("target")
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        absolute = os.path.normpath(os.path.join(source_dir, path))
        if absolute.startswith(docs + os.sep):
            return f"[{label}]({os.path.relpath(absolute, page_dir)}{'#' + anchor if anchor else ''})"
        relative = os.path.relpath(absolute, root)
        if relative in included:
            to = os.path.relpath(os.path.join(docs, included[relative]), page_dir)
            return f"[{label}]({to}{'#' + anchor if anchor else ''})"
        if relative.startswith("..") or not os.path.exists(absolute):
            log.warning("%s: link to %s, which is not in the repository", page, target)
            return m.group(0)
        return label if label.strip("`") == relative else f"{label} (`{relative}`)"

    return _outside_fences(text, lambda part: LINK.sub(fix, part))


def _include(m: re.Match[str], page: str, config: Any) -> str:
    path = os.path.join(_root(config), m.group("path"))
    if not os.path.isfile(path):
        log.warning("%s: includes %s, which does not exist", page, m.group("path"))
        return ""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return _rewrite_links(text, os.path.dirname(path), page, config)


def _cli_reference(config: Any) -> str:
    """`dsha --help` and `dsha COMMAND --help`, as a person at an 100-column terminal sees them."""
    sys.path.insert(0, os.path.join(_root(config), "python"))
    os.environ["COLUMNS"] = "100"
    try:
        from dsha.cli.parser import parser
    finally:
        sys.path.pop(0)
    top = parser()
    sections: List[str] = ["### `dsha`", "", "```text", top.format_help().rstrip(), "```"]
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                sections += ["", f"### `dsha {name}`", "", "```text", sub.format_help().rstrip(), "```"]
    return "\n".join(sections) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    name = page.file.src_uri
    source_dir = os.path.dirname(os.path.join(os.path.abspath(config["docs_dir"]), name))
    # Links of the page itself first: an included file's links are relative to the file, and rewritten on inclusion
    markdown = _rewrite_links(markdown, source_dir, name, config)
    markdown = INCLUDE.sub(lambda m: _include(m, name, config), markdown)
    if CLI_REFERENCE in markdown:
        markdown = markdown.replace(CLI_REFERENCE, _cli_reference(config))
    return markdown
