"""The Python package's layers (ARCHITECTURE.md, "Python"): every import between dsha's modules goes down the table
below or stays in its layer, imports inside functions included, and there is no import circle. Pure Python (the
source is parsed, nothing of dsha is imported), plus one check in a child process that ``import dsha`` loads neither
pyspark, the command line, the orchestrator integrations nor the test helpers (``dsha.testing``).

    python -m pytest tests/layers
"""
import ast
import fnmatch
import os
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

import pytest

PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
PACKAGE = os.path.join(PYTHON, "dsha")

# Lowest first. A module may import modules of its own layer (without a circle) and of the layers before it; layers
# of one rank are siblings that do not import each other (the Arrow engine and Spark share only the core).
LAYERS: List[Tuple[int, str, List[str]]] = [
    (0, "errors", ["dsha.errors"]),
    (1, "core", ["dsha.core", "dsha.core.*", "dsha.dependencies", "dsha._delta_versions", "dsha._iceberg_versions"]),
    (2, "arrow", ["dsha.arrow", "dsha.arrow.*"]),
    (2, "spark", ["dsha.spark", "dsha.spark.*", "dsha.functions"]),
    (3, "tables", ["dsha.tables", "dsha.tables.*"]),
    (3, "jar-free", ["dsha.jarfree", "dsha.jarfree.*", "dsha.digests"]),
    (4, "inputs", ["dsha.inputs"]),
    (5, "store and skip", ["dsha.store", "dsha.skip", "dsha.orchestrators"]),
    (6, "the package's names", ["dsha"]),
    (7, "lineage", ["dsha.openlineage"]),
    (8, "cli", ["dsha.cli", "dsha.cli.*", "dsha.__main__"]),
    (8, "airflow", ["dsha.airflow"]),
    (8, "dagster", ["dsha.dagster"]),
    (8, "testing", ["dsha.testing", "dsha.testing.*"]),
]


def _modules() -> Dict[str, str]:
    """Module name -> file, for every module of the package."""
    out = {}
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(root, f), PYTHON)[:-3].split(os.sep)
                name = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
                out[name] = os.path.join(root, f)
    return out


MODULES = _modules()


def _layer(module: str) -> Optional[Tuple[int, str]]:
    for rank, name, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return rank, name
    return None


def _resolve(module: str, is_package: bool, node: ast.AST) -> List[str]:
    """The dsha modules an import statement imports: ``from a import b`` is ``a.b`` when that is a module, else
    ``a``; a relative import is resolved against the importing module's package."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name == "dsha" or a.name.startswith("dsha.")]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    if base != "dsha" and not base.startswith("dsha."):
        return []
    out = []
    for a in node.names:
        sub = f"{base}.{a.name}"
        out.append(sub if sub in MODULES else base)
    return out


def _imports() -> Dict[str, Set[Tuple[str, int]]]:
    """Module -> the dsha modules it imports (anywhere in it: module level, functions, TYPE_CHECKING blocks), with
    the line."""
    out: Dict[str, Set[Tuple[str, int]]] = {}
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(module, path.endswith("__init__.py"), node):
                    if target != module:
                        found.add((target, node.lineno))
        out[module] = found
    return out


IMPORTS = _imports()


def test_every_module_has_a_layer():
    assert [m for m in sorted(MODULES) if _layer(m) is None] == []


def test_every_import_goes_down_or_stays_in_its_layer():
    wrong = []
    for module, targets in sorted(IMPORTS.items()):
        rank, layer = _layer(module)
        for target, line in sorted(targets):
            assert target in MODULES, f"{module}:{line} imports {target}, which is not a module of dsha"
            t_rank, t_layer = _layer(target)
            if t_layer != layer and t_rank >= rank:
                wrong.append(f"{MODULES[module]}:{line}: {module} ({layer}) imports {target} ({t_layer})")
    assert wrong == [], "imports against the layers:\n" + "\n".join(wrong)


def test_no_import_circle():
    graph = {m: sorted({t for t, _ in targets}) for m, targets in IMPORTS.items()}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    circles: List[List[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == [], f"import circles: {circles}"


def test_the_rule_sees_imports_inside_functions_and_relative_imports():
    """The checker itself: a function's import and a relative import are found."""
    tree = ast.parse("def f():\n    from dsha.cli import app\nfrom . import states\nfrom ..errors import StateError\n")
    found = [t for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
             for t in _resolve("dsha.core.meta", False, n)]
    assert sorted(found) == ["dsha.cli.app", "dsha.core.states", "dsha.errors"]


def test_import_dsha_loads_neither_pyspark_nor_the_command_line():
    code = "import importlib.util, sys; print(importlib.util.find_spec('pyspark') is not None)"
    has_pyspark = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    if has_pyspark.strip() != "True":
        pytest.skip("pyspark is not installed here: nothing to show")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", "import dsha, sys; print('pyspark' in sys.modules, "
                                                "'dsha.cli' in sys.modules, "
                                                "any(m in sys.modules for m in ('airflow', 'dagster', "
                                                "'openlineage', 'dsha.openlineage', "
                                                "'dsha.airflow', 'dsha.dagster', 'dsha.orchestrators', "
                                                "'dsha.testing', 'pytest')), "
                                                "dsha.__file__)"],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out[:3] == ["False", "False", "False"], out
    assert out[3].startswith(os.path.abspath(PACKAGE)), out  # the source tree's package, not another one


def test_every_package_is_in_the_wheel():
    """Each folder of the package (a directory with __init__.py) is listed in pyproject.toml's packages: an installed
    wheel without one fails at `import dsha`, which the editable installs of the test environments never show."""
    import re

    with open(os.path.join(PYTHON, "pyproject.toml"), encoding="utf-8") as f:
        listed = set(re.findall(r'"(dsha(?:\.[a-z_]+)*)"', re.search(r"^packages = \[(.*)\]$", f.read(), re.M).group(1)))
    folders = {".".join(os.path.relpath(root, PYTHON).split(os.sep)) for root, dirs, files in os.walk(PACKAGE)
               if "__init__.py" in files and "__pycache__" not in root}
    assert folders - listed == set(), "add these to [tool.setuptools] packages in python/pyproject.toml"
