"""Diff reports to look at (issue 32, item 3): ``Diff.to_html``, ``Diff._repr_html_`` and ``dsha diff --html``.

The HTML is parsed (``html.parser``) into a tree and read back: its numbers must be the Diff's, its rows those of
exceptAll both ways (a second computation) and of ``changed``, its caps and "N more" right; hostile column names and
values must come back as text, never as markup; special values each in their own class. Once (on pyspark 4), headless
Chromium renders a report: the DOM it built holds the table cells, the console stays silent, the screenshot is a
non-empty PNG. The report is built in Python from collected rows whatever the transport: classic pass only; the CLI,
assert_equal and the browser on one line (pyspark 4).
"""
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser

import pyspark
import pytest
from cli_runner import run_cli

import dsha

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="reports are rendered in Python from collected rows, whatever the transport: "
                                "once, in the classic pass (test_diff runs dsha.diff on Connect)")

# Python plumbing that no Spark line changes (the CLI's option, assert_equal's) and the browser: once, on pyspark 4.
ONCE = pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4,
                          reason="runs once, on the pyspark 4 line: what it checks does not depend on the Spark line")

# What a report may be made of: no script, no image, no link, no form, nothing that loads or runs.
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "div", "h2", "h3", "p", "span", "code", "br",
                "table", "thead", "tbody", "tr", "th", "td"}
VOID = {"meta", "br"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag=None, **attrs):
        """Every element below this one (depth first) of that tag with those attributes (``class_`` for class:
        one of its classes)."""
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if (tag is None or c.tag == tag) and all(_has(c, k, v) for k, v in attrs.items()):
                    out.append(c)
                out += c.all(tag, **attrs)
        return out

    def one(self, tag=None, **attrs):
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def _has(node, key, value):
    if key == "class_":
        return value in node.attrs.get("class", "").split()
    return node.attrs.get(key.replace("_", "-")) == value


class TreeBuilder(HTMLParser):
    """A tree of the page; every start tag and attribute seen is recorded, and a tag closed out of order fails."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Node("#root", [])
        self.tags, self.attributes = Counter(), set()

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self.attributes |= {name for name, _ in attrs}
        node = Node(tag, attrs, self.node)
        self.node.children.append(node)
        if tag not in VOID:
            self.node = node

    def handle_endtag(self, tag):
        assert self.node.tag == tag, f"</{tag}> closes <{self.node.tag}>"
        self.node = self.node.parent

    def handle_data(self, data):
        self.node.children.append(data)


def parse(page):
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.node is builder.root, f"<{builder.node.tag}> is never closed"
    assert set(builder.tags) <= ALLOWED_TAGS, set(builder.tags) - ALLOWED_TAGS
    assert not {a for a in builder.attributes if a.startswith("on") or a in ("src", "href", "action")}
    return builder.root


def field(root, name):
    return root.one("tr", data_field=name).one("td").text()


def count(text):
    return None if text == "?" else int(text.replace(",", ""))


def section_rows(root, kind):
    """The cell texts of a rows table, row by row, and its table element."""
    table = root.one("table", data_section=kind)
    return [tuple(td.text() for td in tr.all("td")) for tr in table.one("tbody").all("tr")], table


def column_counts(root):
    table = root.all("table", class_="dsha-columns")
    if not table:
        return {}
    return {tr.attrs["data-column"]: count(tr.all("td")[1].text()) for tr in table[0].one("tbody").all("tr")}


def shown(v):
    """How the report shows a plain int, str or finite float (an independent formatting, for the tests' data)."""
    return repr(v) if isinstance(v, float) else str(v)


def rows_of_pairs(d, columns):
    """The changed pairs as the report should show them, from ``d.changed`` itself: the key, then per column
    'left → right' or '='."""
    column, left_value, right_value = d.change_names
    pairs = {}
    for r in d.changed.collect():
        pairs.setdefault(r["id"], {})[r[column]] = f"{shown(r[left_value])} → {shown(r[right_value])}"
    return Counter((str(k), *[cells.get(c, "=") for c in columns]) for k, cells in pairs.items())


def check_summary(root, d):
    assert root.one("span", class_="dsha-status").attrs["data-equal"] == str(d.equal).lower()
    assert field(root, "algorithm") == "dsha-v1"
    assert field(root, "method") == d.method
    assert count(field(root, "left_rows")) == d.left_rows and count(field(root, "right_rows")) == d.right_rows
    assert field(root, "left_digest") == (d.left_digest or "—")
    assert field(root, "right_digest") == (d.right_digest or "—")
    if not d.schema_difference:
        assert count(field(root, "only_left")) == d.only_left_count
        assert count(field(root, "only_right")) == d.only_right_count
    assert column_counts(root) == {c: n for c, n in d.columns.items() if n}


@pytest.fixture(scope="module")
def sides(spark):
    left = spark.createDataFrame([(i, f"name{i}", i * 1.5) for i in range(40)], "id INT, name STRING, score DOUBLE")
    right = spark.createDataFrame(
        [(i, f"name{i}" if i != 7 else "renamed", i * 1.5 if i not in (3, 9) else -1.0) for i in range(40) if i != 12]
        + [(100, "new", 0.25), (5, "name5", 7.5)], "id INT, name STRING, score DOUBLE")
    return left, right


@pytest.fixture(scope="module")
def keyless(sides):
    with dsha.diff(*sides) as d:
        yield d


@pytest.fixture(scope="module")
def keyed(sides):
    with dsha.diff(*sides, key="id") as d:
        yield d, d.to_html(max_rows=100)


def test_a_keyless_report_shows_the_diffs_numbers_and_exactly_the_rows_of_except_all(sides, keyless):
    left, right = sides
    d = keyless
    root = parse(d.to_html(max_rows=100))
    check_summary(root, d)
    assert d.only_left_count == 4 and d.only_right_count == 5  # 3 edited, 1 deleted; 3 edited, 1 new, 1 copy
    for kind, side, other in (("only_left", left, right), ("only_right", right, left)):
        rows, table = section_rows(root, kind)
        expected = [tuple(map(shown, r)) for r in side.exceptAll(other).collect()]
        assert Counter(rows) == Counter(expected)
        assert int(table.attrs["data-total"]) == len(expected)
        assert [th.text() for th in table.one("thead").all("th")] == ["idint", "namestring", "scoredouble"]
    assert not root.all("table", data_section="changed")
    assert not root.all("p", class_="dsha-more")  # nothing capped
    # the text the Diff explains holds the same numbers
    assert f"{d.only_left_count} only left, {d.only_right_count} only right" in d.explain()


def test_a_keyed_report_shows_the_changed_values_and_the_per_column_counts(keyed):
    d, page = keyed
    root = parse(page)
    check_summary(root, d)
    assert count(field(root, "changed")) == d.changed_count == 3
    assert field(root, "key") == "id"
    assert column_counts(root) == {"name": 1, "score": 2}
    rows, table = section_rows(root, "changed")
    pairs = rows_of_pairs(d, ["name", "score"])
    assert pairs == Counter(rows) and len(rows) == 3
    assert int(table.attrs["data-total"]) == 3
    assert [th.children[0] for th in table.one("thead").all("th")] == ["id", "name", "score"]
    # each changed cell holds the left value, then the right, marked as such; a cell unchanged is "="
    for tr in table.one("tbody").all("tr"):
        for td in tr.all("td")[1:]:
            if "dsha-same" in td.attrs["class"]:
                assert td.text() == "="
            else:
                assert [s.attrs["class"] for s in td.all("span")[:1]] == ["dsha-left"]
                assert td.all("span", class_="dsha-right")
    capped = parse(d.to_html(max_rows=2))
    rows, _ = section_rows(capped, "changed")
    assert len(rows) == 2 and set(rows) <= set(pairs)
    assert capped.one("p", class_="dsha-more").attrs["data-more"] == "1"
    only_left, _ = section_rows(root, "only_left")
    only_right, _ = section_rows(root, "only_right")
    assert only_left == [("12", "name12", "18.0")]
    assert Counter(only_right) == Counter([("100", "new", "0.25"), ("5", "name5", "7.5")])


def test_rows_are_capped_with_the_number_left_out(keyless):
    d = keyless  # 4 rows only left, 5 only right
    root = parse(d.to_html(max_rows=3))
    for kind, total in (("only_left", 4), ("only_right", 5)):
        rows, table = section_rows(root, kind)
        assert len(rows) == 3 and int(table.attrs["data-total"]) == total
    more = [p.attrs["data-more"] for p in root.all("p", class_="dsha-more")]
    assert more == ["1", "2"]
    assert [p.text() for p in root.all("p", class_="dsha-more")][1].startswith("2 more not shown")
    assert [h.text() for h in root.all("h3")][-2:] == ["Rows only in left (3 of 4)", "Rows only in right (3 of 5)"]
    none = parse(d.to_html(max_rows=0))
    rows, table = section_rows(none, "only_left")
    assert rows == [] and table.attrs["data-total"] == "4"
    assert [p.attrs["data-more"] for p in none.all("p", class_="dsha-more")] == ["4", "5"]
    with pytest.raises(ValueError, match="max_rows"):
        d.to_html(max_rows=-1)


HOSTILE_NAMES = ["<script>", 'a&b "q" \'s\'', "ünï 名 😀"]
HOSTILE_VALUES = ["<script>alert(1)</script>", "</td></tr></table><b>bold</b>", "&amp; & \"quoted\" 'single'",
                  "tab\there\nnew line", "nul\x00and\x1b escape"]
SPECIAL = "d DOUBLE, b BINARY, e STRING, a ARRAY<INT>, m MAP<STRING, DOUBLE>, st STRUCT<x: INT, y: STRING>"


@pytest.fixture(scope="module")
def hostile(spark):
    """Columns named like markup, values that are markup, control characters, a long value; and special values:
    null, NaN and infinity, binary, the empty string, nested values."""
    special = [(float("nan"), bytearray(b"\x00\xff<"), "", [1, None], {"k": float("nan")}, (1, None)),
               (float("inf"), None, None, None, None, None)]
    rows = [(i, HOSTILE_VALUES[i], "ünï 名 😀 " + str(i), *special[i % 2]) for i in range(5)]
    rows += [(5, "x" * 4000 + "<tail>", "long", *special[0]), (None, "null id", "", *special[1])]
    schema = ", ".join(f"`{n}` {t}" for n, t in zip(HOSTILE_NAMES, ("INT", "STRING", "STRING"))) + ", " + SPECIAL
    left = spark.createDataFrame(rows, schema)
    right = spark.createDataFrame([(9, "only right <i>", "é", *special[1])], schema)
    with dsha.diff(left, right) as d:
        yield d, d.to_html(max_rows=10)


def test_hostile_names_and_values_come_back_as_text(hostile):
    d, page = hostile
    root = parse(page)  # no script, b or i tag among the parsed tags, no event attributes
    assert "<script>" not in page and "<b>" not in page and "<i>" not in page
    rows, table = section_rows(root, "only_left")
    headers = [th.children[0] for th in table.one("thead").all("th")]
    assert headers == [*HOSTILE_NAMES, "d", "b", "e", "a", "m", "st"]
    by_id = {r[0]: r for r in rows}
    for i in range(4):
        assert by_id[str(i)][1] == HOSTILE_VALUES[i]
        assert by_id[str(i)][2] == "ünï 名 😀 " + str(i)
    # control characters are shown as escapes, in their own class
    assert by_id["4"][1] == "nul\\x00and\\x1b escape"
    # a long value is cut visibly, with what was left out counted
    assert by_id["5"][1] == "x" * 200 + "… (+3,806 chars)"
    assert section_rows(root, "only_right")[0][0][:3] == ("9", "only right <i>", "é")
    assert root.one("h2").text().startswith("dsha diff: left vs right")
    # names of the sides, as the CLI passes paths, are escaped as well
    named = parse(d.to_html(names=("<b>a</b>", "b & c"), max_rows=0))
    assert "rows only in <b>a</b>" in [th.text() for th in named.all("th")]


def test_null_nan_binary_empty_and_nested_values_each_look_different(hostile):
    d, page = hostile
    table = parse(page).one("table", data_section="only_left")
    cells = {tr.all("td")[0].text(): tr.all("td") for tr in table.one("tbody").all("tr")}
    looks = lambda td: [s.attrs.get("class") for s in td.all("span")]
    first, second, no_id = cells["0"][3:], cells["1"][3:], cells["null"]
    assert looks(no_id[0]) == ["dsha-null"] and looks(no_id[2]) == ["dsha-empty"]
    assert looks(first[0]) == ["dsha-nan"] and first[0].text() == "NaN"
    assert looks(first[1]) == ["dsha-bin"] and first[1].text() == "0x00ff3c"
    assert looks(first[2]) == ["dsha-empty"] and first[2].text() == "(empty string)"
    assert looks(first[3]) == ["dsha-nested"] and first[3].text() == "[1, null]"
    assert looks(first[4]) == ["dsha-nested"] and first[4].text() == '{"k": NaN}'
    assert looks(first[5]) == ["dsha-nested"] and first[5].text() == '{"x": 1, "y": null}'
    assert looks(second[0]) == ["dsha-nan"] and second[0].text() == "Infinity"
    assert [looks(td) for td in second[1:]] == [["dsha-null"]] * 5
    assert d.only_left_count == 7


def test_values_that_do_not_come_through_spark_are_rendered_too():
    """What a report may hold without Spark producing it here: lone surrogates, C1 controls, -Infinity, booleans,
    decimals, timestamps, bytes keys in maps (the renderer is plain Python)."""
    import datetime
    import decimal

    from dsha.core.diff_html import value_html

    text = lambda v, n=200: parse(f"<p>{value_html(v, n)}</p>").one("p").text()
    assert text("a\ud800b\x85c") == "a\\ud800b\\x85c"
    assert text(float("-inf")) == "-Infinity" and text(True) == "true"
    assert text(decimal.Decimal("1.50")) == "1.50"
    assert text(datetime.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert text({b"\x01": [None, "x"]}) == '{0x01: [null, "x"]}'
    assert text(b"\xab" * 300, 10) == "0xabababab… (+592 chars)"


def test_schema_differences_are_a_report_of_their_own(spark):
    left = spark.createDataFrame([(1, "a", 1.0)], "id INT, gone STRING, x DOUBLE")
    right = spark.createDataFrame([(1, 2, 1.0)], "id INT, new INT, x FLOAT")
    d = dsha.diff(left, right)
    root = parse(d.to_html())
    assert root.one("span", class_="dsha-status").text() == "schemas differ"
    changes = {tr.attrs["data-change"]: [td.text() for td in tr.all("td")]
               for tr in root.one("table", class_="dsha-schema").one("tbody").all("tr")}
    assert changes == {"added": ["new", "added", "—", "int"], "removed": ["gone", "removed", "string", "—"],
                       "retyped": ["x", "retyped", "double", "float"]}
    assert not root.all("table", class_="dsha-rows")
    # the text report says the same, from the same summary
    assert d.explain().splitlines()[1:] == ["  added:   new int", "  removed: gone string",
                                            "  retyped: x double -> float"]


def test_an_equal_diff_and_the_notebook_fragment(sides, tmp_path, monkeypatch):
    left, _ = sides
    d = dsha.diff(left, left.select("score", "name", "id"))
    fragment = d._repr_html_()
    assert fragment.startswith('<div class="dsha-diff"><style>') and "<!DOCTYPE" not in fragment
    root = parse(fragment)
    assert root.one("span", class_="dsha-status").attrs["data-equal"] == "true"
    check_summary(root, d)
    assert not root.all("table", class_="dsha-rows") and not root.all("table", class_="dsha-columns")
    # nothing is written without a path; with one, the page returned
    monkeypatch.chdir(tmp_path)
    page = d.to_html()
    assert os.listdir(tmp_path) == []
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page
    written = d.to_html(str(tmp_path / "r.html"))
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == written == page


@ONCE
def test_a_failed_assert_equal_writes_the_report_it_names(sides, keyless, tmp_path):
    from dsha.testing import assert_equal

    left, right = sides
    assert_equal(left, left, html=str(tmp_path / "passed.html"))
    assert os.listdir(tmp_path) == []  # a passing assertion writes nothing
    with pytest.raises(AssertionError) as e:
        assert_equal(left, right, html=str(tmp_path / "failed.html"))
    assert str(e.value).endswith(f"\nreport: {tmp_path / 'failed.html'}")
    root = parse((tmp_path / "failed.html").read_text(encoding="utf-8"))
    assert root.one("h2").text().startswith("dsha diff: actual vs expected")
    assert count(field(root, "left_rows")) == 40 and count(field(root, "right_rows")) == 41
    assert count(field(root, "only_left")) == 4 and count(field(root, "only_right")) == 5
    assert Counter(section_rows(root, "only_left")[0]) == Counter(
        tuple(map(shown, r)) for r in keyless.only_left.collect())  # exceptAll's (the keyless test)


def test_fingerprints_comparisons_and_changes_display_in_notebooks(sides):
    from dsha.core.fingerprint import Comparison
    from dsha.skip import Changes
    from dsha.store import InputRecord, Record

    left, right = sides
    compared = dsha.equal(left, right)
    a, b = compared.left, compared.right  # dsha.fingerprint of each side
    root = parse(a._repr_html_())
    assert {f: field(root, f) for f in ("digest", "algorithm", "schema", "schema_digest", "content_sum")} == {
        "digest": a.digest, "algorithm": a.algorithm, "schema": a.schema, "schema_digest": a.schema_digest,
        "content_sum": a.content_sum}
    assert count(field(root, "rows")) == a.rows == 40
    root = parse(compared._repr_html_())
    assert root.one("span", class_="dsha-status").text() == "differ: row count"
    cells = {f: root.one("tr", data_field=f).all("td") for f in ("digest", "rows", "algorithm", "schema")}
    assert [td.text() for td in cells["rows"]] == ["40", "41"] and cells["rows"][0].attrs["class"] == "dsha-left"
    assert [td.text() for td in cells["digest"]] == [a.digest, b.digest]
    assert "class" not in cells["schema"][0].attrs  # the same schema is not marked
    assert root.one("p", class_="dsha-note").text() == compared.explain()
    assert parse(Comparison(a, a)._repr_html_()).one("span", class_="dsha-status").text() == "equal"
    before = Record("step", {"orders": InputRecord("dataframe", None, None, a)})
    now = Record("step", {"orders": InputRecord("dataframe", None, None, b),
                          "<b>new</b>": InputRecord("dataframe", None, None, a)})
    changes = Changes(before, now, store=None)
    root = parse(changes._repr_html_())
    rows = [tuple(td.text() for td in tr.all("td")) for tr in root.one("table", class_="dsha-changes").all("tr")[1:]]
    assert rows == [(c.input, c.what, c.detail) for c in changes] and len(rows) == 2
    assert root.one("span", class_="dsha-status").text() == "2 changes: run the step"
    unchanged = parse(Changes(before, before, store=None)._repr_html_())
    assert unchanged.one("span", class_="dsha-status").attrs["data-equal"] == "true"


@pytest.fixture(scope="module")
def views(sides):
    """The two sides as temporary views, which the CLI reads as table:NAME (no files to write)."""
    for name, df in zip(("dsha_html_a", "dsha_html_b"), sides):
        df.createOrReplaceTempView(name)
    return "table:dsha_html_a", "table:dsha_html_b"


@ONCE
def test_the_cli_writes_the_report_with_limit_rows(views, tmp_path):
    out = run_cli("diff", *views, "--limit", "2", "--html", tmp_path / "r.html")
    assert out.returncode == 1, out.stderr
    assert f"report written to {tmp_path / 'r.html'}" in out.stderr
    root = parse((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert count(field(root, "only_left")) == 4 and count(field(root, "only_right")) == 5
    rows, table = section_rows(root, "only_left")
    assert len(rows) == 2 and table.attrs["data-total"] == "4"
    assert root.one("h2").text().startswith(f"dsha diff: {views[0]} vs {views[1]}")


@ONCE
def test_the_cli_refuses_an_html_path_it_cannot_write_before_spark_starts(tmp_path):
    from conftest import child_env

    home = tmp_path / "spark_home"  # a SPARK_HOME whose spark-submit records that it was called
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "spark-submit").write_text(f"#!/bin/sh\ntouch {home / 'started'}\nexit 1\n")
    (home / "bin" / "spark-submit").chmod(0o755)
    exists = tmp_path / "exists.html"
    exists.write_text("keep")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    env = child_env(SPARK_HOME=str(home))
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    for target, said in ((exists, f"--html {exists} exists"), (a_file / "r.html", f"{a_file} is not a directory"),
                         ("s3a://bucket/r.html", "local")):
        out = subprocess.run([sys.executable, "-m", "dsha", "diff", "table:a", "table:b", "--html", str(target)],
                             capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
                             check=False)
        assert out.returncode == 2 and out.stdout == "", out
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dsha: error:") and said in lines[0], out.stderr
        assert not (home / "started").exists()
    assert exists.read_text() == "keep"


def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@ONCE
def test_chromium_renders_the_report(keyed, hostile, tmp_path):
    browser = shutil.which("chromium")
    if browser is None:
        if os.environ.get("CI") == "true":  # dev/run test installs it there: a skip would hide a broken install
            pytest.fail("no chromium on PATH on CI, where dev/run's system_packages installs it")
        pytest.skip("no chromium on PATH (Debian's package; dev/run test installs it: apt-get install chromium)")
    (d, keyed_page), (_, hostile_page) = keyed, hostile
    changed = rows_of_pairs(d, ["name", "score"])
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
             "--user-data-dir=" + str(tmp_path / "profile")]
    for name, page in (("keyed", keyed_page), ("hostile", hostile_page)):
        (tmp_path / f"{name}.html").write_text(page, encoding="utf-8")
        url = (tmp_path / f"{name}.html").as_uri()
        dom = subprocess.run([browser, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL, check=True)
        assert ":CONSOLE" not in dom.stderr, dom.stderr  # no script, so no console message and no error
        root = parse(dom.stdout)  # the DOM the browser built, parsed again
        if name == "keyed":
            rows, _ = section_rows(root, "changed")
            assert Counter(rows) == changed
            assert count(field(root, "changed")) == 3
        else:
            rows, table = section_rows(root, "only_left")
            assert [th.children[0] for th in table.one("thead").all("th")][:3] == HOSTILE_NAMES
            assert HOSTILE_VALUES[0] in {r[1] for r in rows}
        png = tmp_path / f"{name}.png"
        subprocess.run([browser, *flags, f"--screenshot={png}", "--window-size=1100,900", url],
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL, check=True)
        data = png.read_bytes()
        assert _png_size(data) == (1100, 900) and len(data) > 10000  # a page with tables, not a blank one
