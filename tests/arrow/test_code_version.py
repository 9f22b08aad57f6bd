"""dsha.code_version follows the code (issue 33, item 6): the same across comments, docstrings, formatting and the
layout of SQL given to .sql(...); another version for a change in a helper of another module, a constant, a method's
class, a changed SQL query; installed packages by their version only; recursion ends; unreadable source is a one-line
error. Pure Python: each case's modules are written into their own directory and imported under the same names."""
import importlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import textwrap
import uuid

import pytest

from dsha.core.code_version import code_version, covered, normalize_sql

NAMES = ("cv_main", "cv_helpers", "cv_config", "cv_other")


@pytest.fixture
def load(tmp_path):
    """load({module: source}) -> the module cv_main, imported from a new directory (earlier loads forgotten)."""

    def load_(files):
        root = tmp_path / uuid.uuid4().hex
        root.mkdir()
        for name, text in files.items():
            (root / f"{name}.py").write_text(textwrap.dedent(text))
        forget()
        sys.path.insert(0, str(root))
        try:
            importlib.invalidate_caches()
            return importlib.import_module("cv_main")
        finally:
            sys.path.remove(str(root))

    def forget():
        for name in NAMES:
            sys.modules.pop(name, None)

    yield load_
    forget()


def version(load, files, attribute="step"):
    return code_version(getattr(load(files), attribute))


BASE = '''
def step(rows, factor=2):
    """Sums the rows, times factor."""
    total = 0
    for r in rows:  # every row
        total += r * factor
    return total
'''
SAME = {
    "reformatted": '''
def step(rows,
         factor = 2):
    total=0
    for r in rows: total += r*factor
    return (total)
''',
    "comments and docstring": '''
# a comment before
def step(rows, factor=2):
    """Another docstring.

    Longer."""
    # a comment
    total = 0
    for r in rows:
        total += r * factor  # another comment
    return total
''',
    "decorated and nested": '''
import functools
def outer():
    @functools.lru_cache()
    def step(rows, factor=2):
        total = 0
        for r in rows:
            total += r * factor
        return total
    return step
step = outer()
''',
}
OTHER = {
    "an operator": BASE.replace("r * factor", "r + factor"),
    "a default": BASE.replace("factor=2", "factor=3"),
    "a statement": BASE.replace("    return total", "    total += 1\n    return total"),
    "a string": BASE.replace("return total", "return str(total) + 'x'"),
}


def test_own_source_ignores_layout_but_not_changes(load):
    base = version(load, {"cv_main": BASE})
    assert len(base) == 32 and base == version(load, {"cv_main": BASE})
    for case, source in SAME.items():
        assert version(load, {"cv_main": source}) == base, case
    others = {case: version(load, {"cv_main": source}) for case, source in OTHER.items()}
    assert base not in others.values() and len(set(others.values())) == len(OTHER), others


MAIN = '''
import cv_helpers
from cv_helpers import scale
from cv_config import LIMIT

THRESHOLD = 10

def step(rows):
    return [scale(r) + cv_helpers.offset() for r in rows if r < THRESHOLD + LIMIT]
'''
HELPERS = '''
def scale(x):
    return x * FACTOR

def offset():
    return 1

def unused():
    return 0

FACTOR = 3
'''
CONFIG = "LIMIT = 5\n"


def test_helpers_and_constants_of_other_modules_count(load):
    files = {"cv_main": MAIN, "cv_helpers": HELPERS, "cv_config": CONFIG}
    commented = "# helpers\n" + HELPERS.replace("x * FACTOR", "x*FACTOR")
    base = version(load, files)
    assert covered(load(files).step) == [
        "constant cv_config.LIMIT", "constant cv_helpers.FACTOR", "constant cv_main.THRESHOLD",
        "function cv_helpers.offset", "function cv_helpers.scale", "function cv_main.step"]
    same = {"a comment in a helper": {**files, "cv_helpers": commented},
            "a function it does not reach": {**files, "cv_helpers": HELPERS.replace("return 0", "return 2")}}
    for case, changed_files in same.items():
        assert version(load, changed_files) == base, case
    other = {"a helper (from-import)": {**files, "cv_helpers": HELPERS.replace("x * FACTOR", "x + FACTOR")},
             "a helper (module.attribute)": {**files, "cv_helpers": HELPERS.replace("return 1", "return 2")},
             "a helper's constant": {**files, "cv_helpers": HELPERS.replace("FACTOR = 3", "FACTOR = 4")},
             "its own constant": {**files, "cv_main": MAIN.replace("THRESHOLD = 10", "THRESHOLD = 11")},
             "an imported constant": {**files, "cv_config": "LIMIT = 6\n"}}
    versions = {case: version(load, changed_files) for case, changed_files in other.items()}
    assert base not in versions.values() and len(set(versions.values())) == len(other), versions


SQL = '''
def step(spark):
    return spark.sql("""select id, name -- the columns
                        from people /* all of them */
                        where city = 'Paris'""")
'''
SQL_SAME = '''
def step(spark):
    return spark.sql("SELECT id,name FROM people WHERE city='Paris'")
'''


def test_sql_text_counts_in_its_normal_form(load):
    assert normalize_sql("select a,b -- c\n from /* x /* nested */ y */ t\n\twhere s = 'It''s -- not a comment'") \
        == "SELECT a , b FROM t WHERE s = 'It' 's -- not a comment'"
    assert normalize_sql('Select `My Col` as Total from t where x = "Mixed Case"') \
        == 'SELECT `My Col` AS Total FROM t WHERE x = "Mixed Case"'
    base = version(load, {"cv_main": SQL})
    assert version(load, {"cv_main": SQL_SAME}) == base
    changed = {"a value": SQL_SAME.replace("'Paris'", "'paris'"), "a column": SQL_SAME.replace("id,", "id2,"),
               "an alias's case": SQL_SAME.replace("name", "name AS Name"),
               "not SQL": SQL_SAME.replace("spark.sql(", "spark.table(")}
    versions = {case: version(load, {"cv_main": source}) for case, source in changed.items()}
    assert base not in versions.values() and len(set(versions.values())) == len(changed), versions


def test_installed_packages_count_by_version(load):
    files = {"cv_main": '''
        import os.path
        import numpy as np
        from numpy import mean
        def step(rows):
            return np.sum(rows) + mean(rows) + len(os.path.join("a", "b"))
        '''}
    python = [v for v in covered(load(files).step) if v.startswith("python==")]
    assert covered(load(files).step) == ["function cv_main.step", f"numpy=={importlib.metadata.version('numpy')}",
                                         *python]
    assert python == [f"python=={'.'.join(map(str, sys.version_info[:3]))} ({sys.implementation.name})"]


def test_recursion_and_cycles_between_modules(load):
    files = {"cv_main": '''
        from cv_other import odd
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)
        def even(n):
            return n == 0 or odd(n - 1)
        def step(n):
            return fact(n) + even(n)
        ''', "cv_other": '''
        import cv_main
        def odd(n):
            return n != 0 and cv_main.even(n - 1)
        '''}
    base = version(load, files)
    assert covered(load(files).step) == ["function cv_main.even", "function cv_main.fact", "function cv_main.step",
                                         "function cv_other.odd"]
    assert version(load, {**files, "cv_other": files["cv_other"].replace("n != 0", "n > 0")}) != base
    assert version(load, {**files, "cv_main": files["cv_main"].replace("n <= 1", "n < 2")}) != base


CLASS = '''
class Model:
    scale = 3

    def run(self, x):
        return self.helper(x) * self.scale

    def helper(self, x):
        return x + 1

def step(x):
    return Model().run(x)
'''


def test_a_method_brings_its_class(load):
    module = load({"cv_main": CLASS})
    base = code_version(module.Model.run)
    assert code_version(module.Model().run) == base and covered(module.Model.run) == [
        "class cv_main.Model", "function cv_main.Model.run"]
    for case, source in {"another method": CLASS.replace("x + 1", "x + 2"),
                         "a class attribute": CLASS.replace("scale = 3", "scale = 4")}.items():
        changed = load({"cv_main": source})
        assert code_version(changed.Model.run) != base, case
        assert code_version(changed.step) != code_version(load({"cv_main": CLASS}).step), case


def test_unreadable_source_is_a_one_line_error(load):
    with pytest.raises(ValueError, match=r"^code_version: builtins\.len is not a Python function or class.*"
                                         r"pass version=$"):
        code_version(len)
    namespace = {}
    exec("def made(x):\n    return x + 1\n", namespace)
    with pytest.raises(ValueError, match=r"^code_version\(made\): cannot read the source of function made "
                                         r"\(OSError: .*\).*pass version=$"):
        code_version(namespace["made"])
    module = load({"cv_main": "def step(x):\n    return helper(x)\n"})
    module.helper = eval("lambda x: x")  # a helper whose source exists nowhere (as typed into a REPL)
    with pytest.raises(ValueError, match=r"^code_version\(cv_main\.step\): cannot read the source of lambda "
                                         r"test_code_version\.<lambda> \(no text of <string>, line 1\).*"
                                         r"pass version=$") as error:
        code_version(module.step)
    assert "\n" not in str(error.value)


def test_the_same_in_another_process_and_another_directory(load, tmp_path):
    files = {"cv_main": MAIN, "cv_helpers": HELPERS, "cv_config": CONFIG}
    here = version(load, files)
    moved = tmp_path / "moved" / "checkout"
    moved.mkdir(parents=True)
    for name, text in files.items():
        (moved / f"{name}.py").write_text(textwrap.dedent(text))
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(importlib.import_module("dsha").__file__)))
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": os.pathsep.join([str(moved), python_dir])}
    out = subprocess.run([sys.executable, "-c", "import cv_main; from dsha.core.code_version import code_version;"
                          " print(code_version(cv_main.step))"], env=env, capture_output=True, text=True,
                         check=True, cwd=str(tmp_path))
    assert out.stdout.strip() == here
    shutil.rmtree(moved)


FACTORY = '''
from cv_helpers import scale

def make(limit):
    calls = 0

    def step(x):
        nonlocal calls
        calls += 1
        return scale(x) if x < limit else 0
    return step

step = make(10)
other_limit = make(11)
'''


def test_a_step_made_by_a_factory_follows_its_closure(load):
    files = {"cv_main": FACTORY, "cv_helpers": HELPERS}
    module = load(files)
    base = code_version(module.step)
    assert module.step(1) == 3 and code_version(module.step) == base  # its state (nonlocal calls) does not count
    assert covered(module.step) == ["constant cv_helpers.FACTOR", "function cv_helpers.scale",
                                    "function cv_main.make.<locals>.step"]
    assert code_version(module.other_limit) != base  # a literal it closes over counts by value
    assert version(load, {**files, "cv_helpers": HELPERS.replace("x * FACTOR", "x - FACTOR")}) != base


NOTEBOOK = '''
import decimal
CONFIG = {"columns": ["a", "b"], "limit": 10}
SESSION = decimal.Context()

def step():
    return CONFIG["limit"], SESSION.prec
'''


def notebook_step(tmp_path, source):
    """``step`` defined as a notebook defines it: its code compiled from a cell's file (linecache reads it), run in
    a namespace without __file__."""
    cell = tmp_path / f"cell_{uuid.uuid4().hex}.py"
    cell.write_text(source)
    namespace = {"__name__": "__main__"}
    exec(compile(source, str(cell), "exec"), namespace)
    return namespace["step"]


def test_a_notebooks_data_counts_by_value_or_type(tmp_path):
    base = code_version(notebook_step(tmp_path, NOTEBOOK))
    assert covered(notebook_step(tmp_path, NOTEBOOK)) == [
        "function __main__.step", f"python=={'.'.join(map(str, sys.version_info[:3]))} ({sys.implementation.name})",
        "value decimal.Context"]
    reformatted = "# a comment\n" + NOTEBOOK.replace('"limit": 10', '"limit":10').replace(
        "return CONFIG", "return (CONFIG").replace("SESSION.prec", "SESSION.prec)")
    assert code_version(notebook_step(tmp_path, reformatted)) == base
    assert code_version(notebook_step(tmp_path, NOTEBOOK.replace('"limit": 10', '"limit": 11'))) != base
