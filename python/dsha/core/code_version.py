"""Code versions: a digest of a function's source as Python reads it, for skip-if-unchanged."""
from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from typing import Any, Callable

__all__ = ["code_version"]


def code_version(func: Callable[..., Any]) -> str:
    """A digest of ``func``'s source as Python reads it (its syntax tree), without docstrings and decorators: the
    same across comments, docstrings and formatting; another one for any change of what the code says."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError) as e:
        raise ValueError(f"cannot read the source of {func!r} ({type(e).__name__}: {e}): pass version=") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.decorator_list = []
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(_canonical(tree).encode("utf-8")).hexdigest()[:32]


def _canonical(node: object) -> str:
    """``ast.dump`` without empty fields, so that Python versions that add (empty) fields give the same text."""
    if isinstance(node, ast.AST):
        fields = [f"{k}={_canonical(v)}" for k, v in ast.iter_fields(node)
                  if v is not None and v != [] and k != "type_comment"]
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(_canonical(x) for x in node) + "]"
    return repr(node)
