"""Code versions for skip-if-unchanged: a digest of a function's code and of the code it reaches.

``code_version(func)`` follows the names a function reads, transitively (each piece visited once, so recursion and
cycles end), and covers:

- **the project's own code** by its syntax tree (``ast``, without docstrings: the same across comments and
  formatting): functions, lambdas, classes (their whole source: methods, bases, class attributes; a method brings its
  class, so ``self.helper()`` counts), modules used whole (not only as ``module.name``), and module-level names that
  are not functions, classes or modules (constants, instances, ...) by the statements that assign them
  (``X = ...``, also under ``if``/``try``; followed through ``from m import X``), not by their value. The project's
  own code is every module with a Python source file that is neither in the standard library nor under a
  ``site-packages``/``dist-packages`` directory: the caller's scripts and notebooks, its packages on ``sys.path``,
  editable installs.
- **installed packages** by their distribution's version (``importlib.metadata``), never by their source; the
  standard library and builtins by Python's version.
- **SQL text**: a string literal given as the first argument (or ``sqlQuery=``) of a ``.sql(...)`` call counts in a
  normal form (``normalize_sql``): comments dropped, tokens separated by one space, keywords upper-cased outside
  string literals and quoted identifiers.
- **closure variables** (a function made by another function), and the data of a namespace without a source file
  (a notebook's, an interpreter's): functions, classes and modules are followed; literals (numbers, strings, and
  tuples, lists, sets, dicts of them) count by value; other data by its type only, as a call's arguments are not
  compared.

Not covered: the root function's own decorators (``@skip_if_unchanged(...)`` is one), values computed at run time
(environment variables, files read), attributes reached through an object other than a module or a class
(``df.method``). Where the source of the project's own code cannot be read (defined in an interactive interpreter,
a compiled module of the project, a file removed since), ``code_version`` raises a one-line ``ValueError`` naming
it and ending "pass version=": it never answers without knowing. Deterministic across processes and checkouts: no
object ids, hash order, absolute paths or module names of the caller enter the digest (each piece of source is
named by the path of names that first reached it from the root, breadth first in sorted order).
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import linecache
import os
import platform
import re
import symtable
import sys
import sysconfig
import textwrap
import types
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple, Union

__all__ = ["code_version", "covered", "normalize_sql"]

Namespace = Dict[str, Any]
_LITERALS = (type(None), bool, int, float, complex, str, bytes)
_COMPILED = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
             types.MethodWrapperType, types.ClassMethodDescriptorType)
_MODULE_DUNDERS = frozenset({"__name__", "__file__", "__package__", "__spec__", "__loader__", "__doc__", "__path__",
                             "__cached__", "__builtins__", "__annotations__", "__dict__"})


def code_version(func: Callable[..., Any]) -> str:
    """A digest of ``func``'s code and of the code it reaches, 32 hex digits (what counts: the change-detection
    page, "What a code version covers", and ``dsha.core.code_version``'s docstring): the same across comments,
    docstrings, formatting and the layout of SQL given to ``.sql(...)``; another one for a change in what the
    function or any function, class or module-level constant of the project's own modules it reaches says, or in
    the installed version of a package it uses. Raises ValueError (one line, ending "pass version=") where some of
    that source cannot be read."""
    return _Walk(func).digest()


def covered(func: Callable[..., Any]) -> List[str]:
    """What ``code_version(func)`` covers, one line each, sorted: ``function m.f``, ``class m.C``, ``constant m.X``,
    ``module m``, ``sql``, ``package numpy==2.0.1``, ``python==3.11.7 (cpython)`` (to see why a version changed)."""
    return _Walk(func).described()


class _Walk:
    """One breadth-first walk from a root: ``pieces`` maps the path of names that first reached a piece of the
    project's own code to its canonical text; ``versions`` holds the installed versions reached."""

    def __init__(self, root: Callable[..., Any]):
        self.root_name = _name(root)
        self.pieces: Dict[str, str] = {}
        self.versions: Set[str] = set()
        self.what: Set[str] = set()
        self.seen: Set[Any] = set()
        self.queue: List[Tuple[str, Any, Optional[Namespace], str]] = []
        target: Any = root
        if isinstance(target, types.MethodType):
            target = target.__func__
        if callable(target) and not isinstance(target, type) and hasattr(target, "__wrapped__"):
            target = inspect.unwrap(target)  # the decorated function (functools.wraps, lru_cache, ...)
        if not isinstance(target, (types.FunctionType, type)):
            raise ValueError(f"code_version: {self.root_name} is not a Python function or class, so there is no "
                             "source to read: pass version=")
        self._visit("", target, None, "")
        while self.queue:
            self._visit(*self.queue.pop(0))

    def digest(self) -> str:
        text = json.dumps({"code": sorted(self.pieces.items()), "versions": sorted(self.versions)},
                          ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def described(self) -> List[str]:
        return sorted(self.what | self.versions)

    def _fail(self, what: str, why: str) -> ValueError:
        return ValueError(f"code_version({self.root_name}): cannot read the source of {what} ({why}), so its changes "
                          "would go unseen: pass version=")

    # --- an object reached by a name ------------------------------------------------------------------------------

    def _visit(self, key: str, obj: Any, namespace: Optional[Namespace], name: str) -> None:
        """``obj`` reached by the path ``key``, as ``name`` of the module globals ``namespace`` when it was read
        from a module of the project's own (None: a closure variable, an argument, the root)."""
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
        if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__wrapped__"):
            with contextlib.suppress(ValueError):  # ValueError: __wrapped__ in a cycle
                obj = inspect.unwrap(obj)  # a decorated helper: its function (its decorators are in its source)
        if isinstance(obj, (types.ModuleType, types.FunctionType, type)):
            if ("object", id(obj)) in self.seen:
                return
            self.seen.add(("object", id(obj)))
        if isinstance(obj, functools.partial):
            self._push(key + "/()", obj.func)
            for i, arg in enumerate([*obj.args, *[v for _, v in sorted(obj.keywords.items())]]):
                self._push(f"{key}/({i})", arg)
        elif isinstance(obj, types.ModuleType):
            self._module(key, obj)
        elif isinstance(obj, types.FunctionType):
            self._function(key, obj)
        elif isinstance(obj, type):
            self._class(key, obj, namespace, name)
        elif namespace is not None and name:
            self._global(key, namespace, name, obj)
        else:
            self._value(key, obj)

    def _push(self, key: str, obj: Any, namespace: Optional[Namespace] = None, name: str = "") -> None:
        self.queue.append((key, obj, namespace, name))

    def _installed(self, module_name: Optional[str], file: Optional[str]) -> bool:
        """True (and its version noted) when the module is an installed package's or Python's."""
        version = _origin(module_name or "", file)
        if version is not None:
            self.versions.add(version)
        return version is not None

    def _module(self, key: str, module: types.ModuleType) -> None:
        if self._installed(module.__name__, getattr(module, "__file__", None)):
            return
        source = _module_source(vars(module))
        if source is None:
            raise self._fail(f"module {module.__name__}", "no Python source file")
        self._piece(key, "module", module.__name__, _parse(source), vars(module), {})

    def _function(self, key: str, func: types.FunctionType) -> None:
        code = func.__code__
        if self._installed(func.__module__, code.co_filename):
            return
        name = _name(func)
        if func.__name__ == "<lambda>":
            tree = _lambda_tree(func)
            if tree is None:
                raise self._fail(f"lambda {name}", f"no text of {code.co_filename}, line {code.co_firstlineno}")
        else:
            try:
                tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
            except (OSError, TypeError, SyntaxError) as e:
                raise self._fail(f"function {name}", f"{type(e).__name__}: {e}") from None
            if key == "" and tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
                tree.body[0].decorator_list = []  # the root's decorators (skip_if_unchanged's arguments among them)
        closure: Namespace = {}
        for var, cell in zip(code.co_freevars, func.__closure__ or ()):
            with contextlib.suppress(ValueError):  # ValueError: an empty cell, a name not yet bound
                closure[var] = cell.cell_contents
        self._piece(key, "function", name, tree, func.__globals__, closure)
        parts = func.__qualname__.split(".")
        if len(parts) > 1 and "<locals>" not in parts:  # a method: its class (self.helper() reads the class)
            owner: Any = func.__globals__.get(parts[0])
            for part in parts[1:-1]:
                owner = getattr(owner, part, None)
            if isinstance(owner, type):
                self._push(key + "/<class>", owner)

    def _class(self, key: str, cls: type, namespace: Optional[Namespace], name: str) -> None:
        module = sys.modules.get(cls.__module__)
        methods = [f for f in vars(cls).values() if isinstance(f, types.FunctionType)]
        file = getattr(module, "__file__", None) or (methods[0].__code__.co_filename if methods else None)
        if self._installed(cls.__module__, file):
            return
        qualified = f"{cls.__module__}.{cls.__qualname__}"
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError) as e:
            if namespace is not None and name:  # made by a call (namedtuple, type(...)): the statement that makes it
                self._global(key, namespace, name, cls)
                return
            raise self._fail(f"class {qualified}", f"{type(e).__name__}: {e}") from None
        globals_ = vars(module) if module is not None else (methods[0].__globals__ if methods else {})
        self._piece(key, "class", qualified, tree, globals_, {})

    def _global(self, key: str, namespace: Namespace, name: str, obj: Any) -> None:
        """A module-level name of the project's own code that is not a function, class or module: the statements
        that bind it in its module's source."""
        if name in _MODULE_DUNDERS or ("global", id(namespace), name) in self.seen:
            return
        self.seen.add(("global", id(namespace), name))
        module_name = str(namespace.get("__name__"))
        source = _module_source(namespace)
        if source is None:  # a notebook's or an interpreter's namespace: its data by value or type, as a closure's
            self._value(key, obj)
            return
        statements = copy.deepcopy(_bindings(_parsed(source).body, name))
        assigned = [s for s in statements if not isinstance(s, ast.ImportFrom)]
        if assigned:
            self._piece(key, "constant", f"{module_name}.{name}", ast.Module(body=assigned, type_ignores=[]),
                        namespace, {})
        for imported in [s for s in statements if isinstance(s, ast.ImportFrom)]:
            self._from_import(f"{key}/<{imported.module}", imported, namespace)
        if not statements:  # set otherwise (globals()[...], a star import, a function's `global`): by its value
            self._value(key, obj)

    def _from_import(self, key: str, node: ast.ImportFrom, namespace: Namespace) -> None:
        module = _import(node.module or "", node.level, namespace)
        if module is None:
            self.pieces[key] = f"not importable: {'.' * node.level}{node.module}"
            return
        if self._installed(module.__name__, getattr(module, "__file__", None)):
            return
        for alias in node.names:
            if hasattr(module, alias.name):
                self._push(f"{key}.{alias.name}", getattr(module, alias.name), vars(module), alias.name)
            else:
                self.pieces[f"{key}.{alias.name}"] = "unbound"

    def _value(self, key: str, obj: Any) -> None:
        literal = _literal(obj)
        if literal is not None:
            self.pieces[key] = "value:" + literal
        elif isinstance(obj, _COMPILED):
            owner = getattr(obj, "__objclass__", None) or getattr(obj, "__self__", None)
            module_name = getattr(obj, "__module__", None) or getattr(owner, "__module__", None) \
                or type(owner).__module__
            if not self._installed(str(module_name), None):
                raise self._fail(f"{_name(obj)} of module {module_name}", "compiled code")
        else:
            self.what.add(f"value {type(obj).__module__}.{type(obj).__qualname__}")
            self._push(key + "/<type>", type(obj))

    # --- a piece of source ------------------------------------------------------------------------------------------

    def _piece(self, key: str, kind: str, name: str, tree: ast.Module, namespace: Namespace,
               closure: Namespace) -> None:
        """Notes the canonical text of ``tree`` and queues what the names it reads from outside it refer to."""
        _strip_docstrings(tree)
        if _normalize_sql_literals(tree):
            self.what.add("sql")
        self.pieces[key] = f"{kind}:{_canonical(tree)}"
        self.what.add(f"{kind} {name}")
        imports = _local_imports(tree)
        chains, bare = _attribute_uses(tree)
        for var in sorted(_free_names(tree) | set(imports)):
            child = f"{key}/{var}"
            if var in imports:
                node = imports[var]
                if isinstance(node, ast.ImportFrom):
                    self._from_import(child, node, namespace)
                    continue
                module = _import(node.names[0].name, 0, namespace)
                if module is None:
                    self.pieces[child] = f"not importable: {node.names[0].name}"
                    continue
                if node.names[0].asname is None:
                    module = sys.modules.get(node.names[0].name.split(".")[0], module)
                self._module_use(child, module, chains.get(var, set()), var in bare)
            elif var in closure:
                value = closure[var]
                if isinstance(value, types.ModuleType):
                    self._module_use(child, value, chains.get(var, set()), var in bare)
                else:
                    self._push(child, value)
            elif var in namespace:
                value = namespace[var]
                if isinstance(value, types.ModuleType):
                    self._module_use(child, value, chains.get(var, set()), var in bare)
                else:
                    self._push(child, value, namespace, var)
            elif hasattr(builtins, var):
                self.versions.add(_python())
            elif var not in _MODULE_DUNDERS:
                self.pieces[child] = "unbound"

    def _module_use(self, key: str, module: types.ModuleType, chains: Set[Tuple[str, ...]], bare: bool) -> None:
        """A module read as ``module.a.b`` (the names it reaches, through submodules) or bare (all of it)."""
        if self._installed(module.__name__, getattr(module, "__file__", None)):
            return
        if bare or not chains:
            self._push(key, module)
        for chain in sorted(chains):
            current, path = module, key
            for i, attr in enumerate(chain):
                path = f"{path}.{attr}"
                if not hasattr(current, attr):
                    self.pieces[path] = "unbound"
                    break
                value = getattr(current, attr)
                if not isinstance(value, types.ModuleType):
                    self._push(path, value, vars(current), attr)
                    break
                if self._installed(value.__name__, getattr(value, "__file__", None)):
                    break
                if i == len(chain) - 1:
                    self._push(path, value)
                current = value


# --- where a module comes from --------------------------------------------------------------------------------------

def _origin(module_name: str, file: Optional[str]) -> Optional[str]:
    """``name==version`` of the installed distributions a module comes from, Python's version for the standard
    library and builtins, None for the project's own code."""
    if file is None:
        file = getattr(sys.modules.get(module_name), "__file__", None)
    top = module_name.split(".")[0]
    if file is None:
        if top in sys.builtin_module_names or top in _stdlib_names() or top == "builtins":
            return _python()
        return None
    if _is_installed_file(file):
        return _distribution_versions(top, module_name)
    if _is_stdlib_file(file):
        return _python()
    return None


def _is_installed_file(file: str) -> bool:
    parts = os.path.normcase(os.path.abspath(file)).replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


@functools.cache
def _stdlib_dirs() -> Tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.normcase(os.path.abspath(paths[k])) + os.sep for k in ("stdlib", "platstdlib")
                         if k in paths}))


def _is_stdlib_file(file: str) -> bool:
    path = os.path.normcase(os.path.abspath(file))
    return any(path.startswith(d) for d in _stdlib_dirs())


def _stdlib_names() -> FrozenSet[str]:
    return frozenset(getattr(sys, "stdlib_module_names", ()))


def _python() -> str:
    return f"python=={platform.python_version()} ({sys.implementation.name})"


@functools.cache
def _packages() -> Dict[str, List[str]]:
    mapping = getattr(importlib.metadata, "packages_distributions", None)
    return dict(mapping()) if mapping is not None else {}


@functools.cache
def _distribution_versions(top: str, module_name: str) -> str:
    names = sorted(set(_packages().get(top, []))) or [top]
    versions = []
    for dist in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions.append(f"{dist}=={importlib.metadata.version(dist)}")
    if not versions:
        raise ValueError(f"code_version: module {module_name} is installed, but no installed distribution says it "
                         "provides it, so its version is unknown: pass version=")
    return ", ".join(versions)


def _import(module: str, level: int, namespace: Namespace) -> Optional[types.ModuleType]:
    try:
        return importlib.import_module("." * level + module, namespace.get("__package__") or None)
    except (ImportError, TypeError):
        return None


# --- reading source -------------------------------------------------------------------------------------------------

def _module_source(namespace: Namespace) -> Optional[str]:
    file = namespace.get("__file__")
    if not isinstance(file, str):
        return None
    lines = linecache.getlines(file, namespace)
    return "".join(lines) if lines else None


@functools.lru_cache(maxsize=64)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


def _parse(source: str) -> ast.Module:
    """A fresh tree (the pieces are changed in place: docstrings, SQL)."""
    return copy.deepcopy(_parsed(source))


def _lambda_tree(func: types.FunctionType) -> Optional[ast.Module]:
    """The lambdas that start on the line of ``func``'s (one of them is ``func``; its neighbours count too)."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename, func.__globals__)
    if not lines:
        return None
    try:
        tree = _parse("".join(lines))
    except SyntaxError:
        return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    return ast.Module(body=[ast.Expr(value=n) for n in found], type_ignores=[]) if found else None


def _bindings(body: List[ast.stmt], name: str) -> List[ast.stmt]:
    """The module-level statements of ``body`` that bind ``name`` (also under if/try/with/for/while)."""
    found: List[ast.stmt] = []
    for statement in body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                found.append(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == name:
                found.append(statement)
        elif isinstance(statement, ast.ImportFrom):
            aliases = [a for a in statement.names if (a.asname or a.name) == name]
            if aliases:
                found.append(ast.ImportFrom(module=statement.module, names=aliases, level=statement.level))
        else:
            for field in ("body", "orelse", "finalbody"):
                found += _bindings(getattr(statement, field, None) or [], name)
            for handler in getattr(statement, "handlers", None) or []:
                found += _bindings(handler.body, name)
    return found


def _local_imports(tree: ast.Module) -> Dict[str, Union[ast.Import, ast.ImportFrom]]:
    """Names bound by import statements inside the piece (an import inside a function), each as a one-name import."""
    found: Dict[str, Union[ast.Import, ast.ImportFrom]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = ast.Import(names=[alias])
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = ast.ImportFrom(module=node.module, names=[alias],
                                                                        level=node.level)
    return found


def _free_names(tree: ast.Module) -> Set[str]:
    """The names the piece reads from outside itself: globals and builtins of its scopes (symtable), and the names of
    its top level it reads without binding (a function's defaults, a class's bases)."""
    source = ast.unparse(tree)
    nonlocals = sorted({n for node in ast.walk(tree) if isinstance(node, ast.Nonlocal) for n in node.names})
    if nonlocals:  # a nested function's `nonlocal x` needs an enclosing function that binds x (its state: not code)
        source = f"def _outer():\n    {' = '.join(nonlocals)} = None\n{textwrap.indent(source, '    ')}"
    table = symtable.symtable(source, "<code_version>", "exec")
    if nonlocals:
        table = table.get_children()[0]  # the enclosing function stands for the piece's top level
    names: Set[str] = set()

    def visit(t: symtable.SymbolTable, top: bool) -> None:
        for symbol in t.get_symbols():
            if symbol.is_referenced() and symbol.is_global() and not (top and symbol.is_assigned()):
                names.add(symbol.get_name())
        for child in t.get_children():
            visit(child, False)

    visit(table, True)
    return names


def _attribute_uses(tree: ast.Module) -> Tuple[Dict[str, Set[Tuple[str, ...]]], Set[str]]:
    """Per name, the attribute chains read from it (``m.a.b`` → ``("a", "b")``), and the names read bare."""
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    chains: Dict[str, Set[Tuple[str, ...]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            attrs: List[str] = []
            current: ast.expr = node
            while isinstance(current, ast.Attribute):
                attrs.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                chains.setdefault(current.id, set()).add(tuple(reversed(attrs)))
    bare = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in inner}
    return chains, bare


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                node.body = node.body[1:] or [ast.Pass()]


def _literal(value: Any, depth: int = 0) -> Optional[str]:
    """The text of a literal: numbers, strings, bytes, None, and tuples, lists, sets and dicts of them (a container
    that changes as the program runs may give another version: a re-run, never a change missed), else None."""
    if isinstance(value, _LITERALS):
        return f"{type(value).__name__}:{value!r}"
    if depth > 20 or not isinstance(value, (tuple, list, set, frozenset, dict)):
        return None
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    items = [(_literal(k, depth + 1) if isinstance(value, dict) else "", _literal(v, depth + 1)) for k, v in pairs]
    if any(k is None or v is None for k, v in items):
        return None
    texts = [f"{k}:{v}" if isinstance(value, dict) else str(v) for k, v in items]
    if isinstance(value, (set, frozenset, dict)):
        texts.sort()
    return f"{type(value).__name__}:[{','.join(texts)}]"


def _name(obj: Any) -> str:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(qualname, str):
        return repr(obj)
    return f"{module}.{qualname}" if isinstance(module, str) else qualname


def _canonical(node: object) -> str:
    """``ast.dump`` without empty fields, so that Python versions that add (empty) fields give the same text."""
    if isinstance(node, ast.AST):
        fields = [f"{k}={_canonical(v)}" for k, v in ast.iter_fields(node)
                  if v is not None and v != [] and k != "type_comment"]
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(_canonical(x) for x in node) + "]"
    return repr(node)


# --- SQL ------------------------------------------------------------------------------------------------------------

def _normalize_sql_literals(tree: ast.AST) -> bool:
    """Rewrites, in place, the string literals given to ``.sql(...)`` (first argument or ``sqlQuery=``) in their
    normal form; True when there was one."""
    found = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sql":
            arguments = node.args[:1] + [k.value for k in node.keywords if k.arg == "sqlQuery"]
            for argument in arguments:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    argument.value = normalize_sql(argument.value)
                    found = True
    return found


_SQL_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<line>--[^\n]*)
  | (?P<block>/\*)
  | (?P<string>'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?)
  | (?P<quoted>`(?:[^`]|``)*`?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][A-Za-z0-9_.]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

# Spark SQL's keywords (and type names), whose case does not matter; other words (names, aliases) keep theirs.
_SQL_KEYWORDS = frozenset({
    "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "ANTI", "ANY", "ARRAY", "AS", "ASC", "AT", "BETWEEN",
    "BIGINT", "BINARY", "BOOLEAN", "BOTH", "BUCKET", "BUCKETS", "BY", "BYTE", "CACHE", "CASCADE", "CASE", "CAST",
    "CHAR", "CHANGE", "CHECK", "CLEAR", "CLUSTER", "CLUSTERED", "COLLATE", "COLLECTION", "COLUMN", "COLUMNS",
    "COMMENT", "COMMIT", "COMPUTE", "CONSTRAINT", "CREATE", "CROSS", "CUBE", "CURRENT", "CURRENT_DATE",
    "CURRENT_TIMESTAMP", "DATA", "DATABASE", "DATABASES", "DATE", "DAY", "DAYS", "DECIMAL", "DEC", "DEFAULT",
    "DELETE", "DELIMITED", "DESC", "DESCRIBE", "DISTINCT", "DISTRIBUTE", "DIV", "DOUBLE", "DROP", "ELSE", "END",
    "ESCAPE", "ESCAPED", "EXCEPT", "EXISTS", "EXPLAIN", "EXTERNAL", "EXTRACT", "FALSE", "FIELDS", "FILTER", "FIRST",
    "FLOAT", "FOLLOWING", "FOR", "FOREIGN", "FORMAT", "FROM", "FULL", "FUNCTION", "FUNCTIONS", "GLOBAL", "GRANT",
    "GROUP", "GROUPING", "HAVING", "HOUR", "HOURS", "IF", "IGNORE", "ILIKE", "IN", "INNER", "INSERT", "INT",
    "INTEGER", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "KEY", "LAST", "LATERAL", "LEADING", "LEFT", "LIKE",
    "LIMIT", "LIST", "LOAD", "LOCAL", "LOCATION", "LONG", "MAP", "MATCHED", "MERGE", "MINUS", "MINUTE", "MINUTES",
    "MONTH", "MONTHS", "NATURAL", "NO", "NOT", "NULL", "NULLS", "OF", "OFFSET", "ON", "ONLY", "OPTIONS", "OR",
    "ORDER", "OUTER", "OVER", "OVERWRITE", "PARTITION", "PARTITIONED", "PARTITIONS", "PERCENT", "PIVOT", "PRECEDING",
    "PRIMARY", "QUALIFY", "RANGE", "RECURSIVE", "REFERENCES", "REFRESH", "REGEXP", "RENAME", "REPLACE", "RESPECT",
    "RIGHT", "RLIKE", "ROLLUP", "ROW", "ROWS", "SCHEMA", "SECOND", "SECONDS", "SELECT", "SEMI", "SET", "SETS",
    "SHORT", "SHOW", "SMALLINT", "SOME", "SORT", "SORTED", "STRING", "STRUCT", "TABLE", "TABLES", "TABLESAMPLE",
    "TBLPROPERTIES", "TEMP", "TEMPORARY", "THEN", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ", "TINYINT",
    "TO", "TRAILING", "TRUE", "TRUNCATE", "TRY_CAST", "UNBOUNDED", "UNCACHE", "UNION", "UNIQUE", "UNPIVOT", "UPDATE",
    "USE", "USING", "VALUES", "VARCHAR", "VARIANT", "VIEW", "VIEWS", "WEEK", "WEEKS", "WHEN", "WHERE", "WINDOW",
    "WITH", "WITHIN", "YEAR", "YEARS"
})


def normalize_sql(text: str) -> str:
    """SQL text in a normal form, the same for the same query however it is laid out: ``--`` and (nested) ``/* */``
    comments dropped, tokens separated by one space, keywords upper-cased; string literals ('…', "…") and quoted
    identifiers (`…`) kept as written."""
    tokens: List[str] = []
    position = 0
    while position < len(text):
        match = _SQL_TOKEN.match(text, position)
        assert match is not None  # the last alternative matches any character
        kind, token = match.lastgroup, match.group()
        position = match.end()
        if kind == "block":
            depth = 1
            while depth and position < len(text):
                if text.startswith("/*", position):
                    depth, position = depth + 1, position + 2
                elif text.startswith("*/", position):
                    depth, position = depth - 1, position + 2
                else:
                    position += 1
        elif kind == "word":
            tokens.append(token.upper() if token.upper() in _SQL_KEYWORDS else token)
        elif kind not in ("space", "line"):
            tokens.append(token)
    return " ".join(tokens)
