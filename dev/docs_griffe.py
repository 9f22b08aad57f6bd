"""A griffe extension for the Python API reference (mkdocs.yml): docstrings that the package composes at import time.

``dsha.fingerprint``, ``equal`` and ``state`` (python/dsha/digests.py) take the docstring of the jar's function and
add a paragraph: ``fingerprint.__doc__ = (jvm.fingerprint.__doc__ or "") + \"\"\"...\"\"\"``. Griffe reads source
without running it, so it sees no docstring and the reference would leave out the package's main functions. This
extension evaluates exactly that form of assignment from the source; importing the package instead would import
``dsha.__main__`` (the CLI) and the Arrow engine's pyarrow.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, List, Optional, Tuple

import griffe

__all__ = ["ComposedDocstrings"]


def _composition(node: ast.stmt) -> Optional[Tuple[str, str, str, str]]:
    """(function, module alias, source function, added text) of ``f.__doc__ = (m.g.__doc__ or "") + "text"``."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp)):
        return None
    target, value = node.targets[0], node.value
    if not (isinstance(target, ast.Attribute) and target.attr == "__doc__" and isinstance(target.value, ast.Name)):
        return None
    left, right = value.left, value.right
    if not (isinstance(left, ast.BoolOp) and isinstance(right, ast.Constant) and isinstance(right.value, str)):
        return None
    doc = left.values[0]
    if not (isinstance(doc, ast.Attribute) and doc.attr == "__doc__" and isinstance(doc.value, ast.Attribute)
            and isinstance(doc.value.value, ast.Name)):
        return None
    return target.value.id, doc.value.value.id, doc.value.attr, right.value


class ComposedDocstrings(griffe.Extension):  # type: ignore[misc]  # griffe is only in .venv/docs
    def __init__(self) -> None:
        self.pending: List[Tuple[griffe.Module, ast.Module]] = []

    def on_module_members(self, *, node: Any, mod: griffe.Module, **kwargs: Any) -> None:
        if isinstance(node, ast.Module):  # read from source (not inspected)
            self.pending.append((mod, node))

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for module, tree in self.pending:
            for statement in tree.body:
                found = _composition(statement)
                if found is None:
                    continue
                name, alias, source, added = found
                function, origin = module.members.get(name), module.members.get(alias)
                if function is None or origin is None:
                    continue
                try:
                    base = (origin.target if isinstance(origin, griffe.Alias) else origin)[source].docstring
                except (griffe.AliasResolutionError, KeyError):
                    base = None
                text = base.value if base is not None else ""
                function.docstring = griffe.Docstring(text + "\n\n" + inspect.cleandoc(added), parent=function)
        self.pending.clear()
