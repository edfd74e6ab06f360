"""The cohort report: `grader grade --report` on a tiny real batch, `grader report` on its saved
JSON, and the page as a headless Chromium renders it from disk.

The batch is three part-1 submissions (full marks, the reversed multiply order, a syntax error)
and an unreadable zip, graded once in the session's warm worker.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

for _extra in ("matplotlib", "jinja2"):
    pytest.importorskip(_extra, reason="the cohort report's [report] extra is not installed "
                        "(pip install -e '.[report]')")

from grader import REPORT_INSTALL, cli  # noqa: E402 - after the extra is known to be there
from grader.checks.table import checks_for  # noqa: E402
from grader.coach import batch  # noqa: E402
from grader.coach.cohort import cohort, read_results  # noqa: E402
from grader.render.cohort_report import render_html  # noqa: E402
from grader.runner.pool import WorkerPool  # noqa: E402

from helpers import (  # noqa: E402
    PREFIX,
    LentWorker,
    lend_pool,
    validate_document,
    write_workspace,
)
from helpers import finish as finish_by_work  # noqa: E402

CONFIG = 'flavor = "torch"\nparts = ["part1"]\ntimeout = 30\n'
NAMES = ["ann", "ben", "cat", "dan.zip"]
# cat's part 1 is the reference with a broken line after a blank one.
CAT_LINE = len(PREFIX.reference_file(PREFIX.part("part1"), "torch").read_text().splitlines()) + 2
CAT_FLAG = (f"part1_inplace.py:{CAT_LINE} SyntaxError: invalid syntax: is not valid Python, "
            "so it could not be scanned")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli.cli, [str(a) for a in args], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def batch_run(grading, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("cohort")
    subs = root / "subs"
    write_workspace(subs / "ann", "torch")
    wrong = write_workspace(subs / "ben", "torch") / "exercises" / "part1_inplace.py"
    wrong.write_text(wrong.read_text().replace("P[i - 1] @ W[i]", "W[i] @ P[i - 1]"))
    broken = write_workspace(subs / "cat", "torch") / "exercises" / "part1_inplace.py"
    broken.write_text(broken.read_text() + "\ndef broken(:\n")
    (subs / "dan.zip").write_bytes(b"not a zip")
    (root / "grader.toml").write_text(CONFIG)
    report = root / "report.html"
    with pytest.MonkeyPatch.context() as patch:
        lend_pool(patch, lambda: LentWorker(grading.worker), jobs=1)
        done = invoke("grade", subs, "--config", root / "grader.toml", "--seed", "7", "--json",
                      "--report", report)
    assert done.exit_code == 0, done.output
    (root / "results.json").write_text(done.stdout)
    return {"root": root, "doc": json.loads(done.stdout), "report": report,
            "stderr": done.stderr}


def row(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in doc["submissions"] if Path(s["path"]).name == name)


def test_the_figures_are_the_documents(batch_run: dict[str, Any]) -> None:
    doc = batch_run["doc"]
    validate_document(doc, "grade")
    assert [Path(s["path"]).name for s in doc["submissions"]] == NAMES
    summary = cohort(read_results(batch_run["root"] / "results.json"))
    assert summary.total.scores == [s["score"] for s in doc["submissions"]]
    assert summary.total.scores[0] == 20.0 and summary.total.full_marks == 1
    assert [p.id for p in summary.parts] == ["part1"]
    correctness = next(c for c in summary.checks if c.id == "part1.correctness")
    assert (correctness.passed, correctness.applied) == (1, 3)  # dan.zip was never graded
    assert correctness.statuses["failed"] == 1 and correctness.statuses["error"] == 1
    named = {m.hint.split(":")[0]: m for m in summary.mistakes}
    assert named["matmul is not commutative"].submissions == [1]
    assert named["matmul is not commutative"].checks == ["part1.correctness"]
    assert all(len(m.submissions) <= len(summary.mistakes[0].submissions)
               for m in summary.mistakes)
    (crash,) = summary.crashes
    part1_checks = len(checks_for(PREFIX, "part1", "torch"))
    assert (crash.submission, crash.part_id, len(crash.checks)) == (2, "part1", part1_checks)
    assert "SyntaxError" in crash.message
    assert summary.timeouts == [] and summary.ungraded == [3]
    assert summary.scanned and summary.flagged == [2]  # cat does not parse
    assert f"cohort report (4 submissions): {batch_run['report']}" in batch_run["stderr"]


def test_a_report_of_the_saved_json_is_the_same_page(batch_run: dict[str, Any]) -> None:
    done = invoke("report", batch_run["root"] / "results.json")
    assert done.exit_code == 0, done.output
    again = batch_run["root"] / "results.html"  # RESULTS with the suffix .html
    assert again.read_bytes() == batch_run["report"].read_bytes()
    assert done.stderr == f"cohort report (4 submissions): {again}\n"


def test_a_report_replaces_an_earlier_report_and_nothing_else(batch_run: dict[str, Any],
                                                               tmp_path: Path) -> None:
    """A report is written over an earlier report (or an empty file), never over a file of
    anything else: a slip of -o costs no one's file, and the refusal comes before any work."""
    results = batch_run["root"] / "results.json"
    earlier = tmp_path / "earlier.html"
    earlier.write_bytes(batch_run["report"].read_bytes().replace(b"<title>", b"<title>old "))
    assert invoke("report", results, "-o", earlier).exit_code == 0
    assert earlier.read_bytes() == batch_run["report"].read_bytes()
    notes = tmp_path / "notes.html"
    notes.write_text("<html>my notes</html>\n")
    done = invoke("report", results, "-o", notes)
    assert done.exit_code == 2
    assert f"Error: --output: {notes} exists and is not a cohort report: move it away or " \
        "name another file" in done.output
    assert notes.read_text() == "<html>my notes</html>\n"


# --- the page in a browser ------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Element | str] = []

    def iter(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def text(self) -> str:
        return " ".join(self._raw().split())

    def _raw(self) -> str:
        return "".join(c if isinstance(c, str) else c._raw() for c in self.children)

    def by_id(self, id_: str) -> Element:
        return next(e for e in self.iter() if e.attrs.get("id") == id_)

    def select(self, tag: str | None = None, cls: str | None = None) -> list[Element]:
        return [e for e in self.iter() if (tag is None or e.tag == tag)
                and (cls is None or cls in (e.attrs.get("class") or "").split())]


class Tree(HTMLParser):
    """The DOM Chromium dumped, as a tree of Elements (stdlib only)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.root = Element("#document", {})
        self.stack = [self.root]
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    pytest.skip("no Chromium here (.ci/install adds the Debian package where apt-get is)")


def browse(url: str, scratch: Path, *options: str) -> subprocess.Popen[str]:
    """Headless Chromium on `url` with a fresh profile, nothing fetched on its own account."""
    profile = tempfile.mkdtemp(dir=scratch)
    return subprocess.Popen(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}", *options, url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str]) -> str:
    try:
        out, err = finish_by_work(process, 90)
    except subprocess.TimeoutExpired:
        pytest.fail("Chromium is installed but did not finish within 90 s of its work")
    if process.returncode != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        pytest.fail(f"Chromium is installed but failed: "
                    f"{lines[-1] if lines else process.returncode}")
    return out


@pytest.fixture(scope="module")
def rendered(batch_run: dict[str, Any]) -> dict[str, Any]:
    """The DOM of the report opened on row 2's address, and a screenshot of its top, taken
    side by side."""
    url = batch_run["report"].resolve().as_uri()
    scratch = batch_run["root"]
    screenshot = scratch / "cohort-report.png"
    shot = browse(url, scratch, f"--screenshot={screenshot}", "--window-size=1200,1600")
    dom = browse(url + "#sub-2", scratch, "--dump-dom")
    tree = Tree(finish(dom)).root
    finish(shot)
    print(f"\ncohort report screenshot: {screenshot}", file=sys.stderr)
    return {"dom": tree, "screenshot": screenshot}


def test_the_browser_draws_the_charts_and_the_documents_numbers(
        batch_run: dict[str, Any], rendered: dict[str, Any]) -> None:
    dom, doc = rendered["dom"], batch_run["doc"]
    scores = [s["score"] for s in doc["submissions"]]
    for chart in ("chart-total", "chart-part1"):
        (svg,) = dom.by_id(chart).select("svg")
        assert len(svg.select("path")) > 10
    stats = dom.by_id("stats-total")
    assert stats.select(cls="mean")[0].text() == f"{statistics.fmean(scores):.1f}"
    assert stats.select(cls="median")[0].text() == f"{statistics.median(scores):.1f}"
    assert stats.select(cls="full-marks")[0].text() == "1"
    assert dom.by_id("tile-ungraded").select("b")[0].text() == "1"
    assert dom.by_id("tile-crashes").select("b")[0].text() == "1"

    correctness = dom.by_id("check-part1.correctness")
    assert correctness.select(cls="passed")[0].text() == "1/3"
    assert correctness.select(cls="pct")[0].text() == "33%"
    mistakes = dom.by_id("mistakes").select("li")
    reversed_order = next(m for m in mistakes if "matmul is not commutative" in m.text())
    assert reversed_order.select(cls="count")[0].text() == "1 of 4"
    assert [a.attrs["href"] for a in reversed_order.select("a")] == ["#sub-2"]
    assert "#4 dan.zip" in dom.by_id("ungraded").text()
    assert dom.by_id("flags").text() == f"#3 cat: {CAT_FLAG}"
    assert dom.by_id("tile-flagged").select("b")[0].text() == "1"


def test_the_row_named_in_the_address_opens_its_scorecard(
        batch_run: dict[str, Any], rendered: dict[str, Any]) -> None:
    dom = rendered["dom"]
    rows = dom.select("details", "submission")
    assert [r.attrs["id"] for r in rows] == ["sub-1", "sub-2", "sub-3", "sub-4"]
    assert [("open" in r.attrs) for r in rows] == [False, True, False, False]
    ben = row(batch_run["doc"], "ben")
    shown = {r.attrs["data-check"]: r.select(cls="badge")[0].text()
             for r in rows[1].select("tr", "check-row")}
    assert shown == {c["id"]: c["status"] for c in ben["parts"][0]["checks"]}
    assert "hint: matmul is not commutative" in rows[1].text()


def test_the_page_needs_no_network(rendered: dict[str, Any]) -> None:
    dom = rendered["dom"]
    for element in dom.iter():
        for attr in ("src", "href"):
            value = element.attrs.get(attr) or ""
            assert not value.startswith(("http:", "https:", "//")), (element.tag, value)
    assert not dom.select("link") and all("src" not in s.attrs for s in dom.select("script"))


def test_a_screenshot_is_saved(rendered: dict[str, Any]) -> None:
    data = rendered["screenshot"].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == 1200  # the PNG header's width


# --- without a browser ----------------------------------------------------------------------

def test_review_flags_are_shown_where_a_scan_ran(batch_run: dict[str, Any]) -> None:
    page = Tree(batch_run["report"].read_text()).root
    assert page.by_id("flags").text() == f"#3 cat: {CAT_FLAG}"
    assert f"Review flags: {CAT_FLAG}" in page.by_id("sub-3").text()
    assert "review scan" not in page.by_id("trouble").text()
    doc = json.loads(json.dumps(batch_run["doc"]))
    for sub in doc["submissions"]:
        sub.pop("flags", None)
    assert "these results carry no review scan" in Tree(render_html(doc)).root.by_id(
        "trouble").text()


def test_a_check_that_could_not_apply_is_not_applicable_not_a_zero_rate(
        batch_run: dict[str, Any]) -> None:
    """GPU timing graded on a machine without CUDA is worth nothing and skipped in every row:
    the check table says it did not apply, not "0% 0/2"; a check that applied to some rows is
    rated over those alone."""
    doc = json.loads(json.dumps(batch_run["doc"]))
    graded = [sub for sub in doc["submissions"] if sub["status"] == "graded"]
    for number, sub in enumerate(graded):
        status = "passed" if number == 0 else "skipped"
        sub["parts"][0]["checks"].append({
            "id": "part1.timing", "title": "timed on the GPU", "status": status,
            "score": 0.0, "max_score": 1.0 if status == "passed" else 0.0,
            "message": "", "hint": None, "duration_s": 0.0})
        sub["parts"][0]["checks"].append({
            "id": "part1.gpu", "title": "runs on the GPU", "status": "skipped", "score": 0.0,
            "max_score": 0.0, "message": "needs a CUDA device", "hint": None,
            "duration_s": 0.0})
    page = Tree(render_html(doc)).root
    gpu = page.by_id("check-part1.gpu")
    assert gpu.select(cls="rate")[0].text() == \
        f"not applicable on the grading machine ({len(graded)})"
    assert "%" not in gpu.text() and "low" not in gpu.attrs.get("class", "")
    timing = page.by_id("check-part1.timing")
    assert timing.select(cls="pct")[0].text() == "100%"
    assert timing.select(cls="passed")[0].text() == "1/1"


def test_what_a_candidate_chose_reaches_the_page_as_text(batch_run: dict[str, Any]) -> None:
    """Their file names, messages and prints: HTML-escaped, without control characters."""
    doc = json.loads(json.dumps(batch_run["doc"]))
    ben = row(doc, "ben")
    ben["path"] = "subs/<i>ben\x1b]52;c;ZXZpbA==\x07"
    ben["flags"] = [{"file": "<script>alert(1)</script>\x1b[2J.py", "line": 3,
                     "rule": "processes", "construct": "os.fork",
                     "reason": "starts or signals processes"}]
    ben["parts"][0]["checks"][0]["message"] = "\x1b[31m[link=http://evil]x[/link]\x9b2J"
    html = render_html(doc)
    assert "\x1b" not in html and "\x9b" not in html and "\x07" not in html
    assert "<script>alert" not in html and "<i>ben" not in html
    page = Tree(html).root
    assert [li.text() for li in page.by_id("flags").select("li")] == [
        "#2 <i>ben: <script>alert(1)</script>.py:3 os.fork: starts or signals processes",
        f"#3 cat: {CAT_FLAG}"]
    assert "[link=http://evil]x[/link]" in page.by_id("sub-2").text()


def test_without_the_report_extra_one_line_says_what_to_install(
        batch_run: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)

    def no_grading(jobs: int, **_: object) -> WorkerPool:
        raise AssertionError("graded although the report cannot be written")

    monkeypatch.setattr(batch, "WorkerPool", no_grading)
    message = ("Error: the cohort report needs matplotlib and jinja2 (missing: matplotlib); "
               f"install them with: {REPORT_INSTALL}\n")
    report = invoke("report", batch_run["root"] / "results.json")
    assert (report.exit_code, report.output) == (1, message)
    grade = invoke("grade", batch_run["root"] / "subs", "--report", batch_run["root"] / "x.html")
    assert (grade.exit_code, grade.output) == (1, message)


@pytest.mark.parametrize(("content", "says"), [
    ("not json", "not JSON (Expecting value at line 1, column 1)"),
    pytest.param('{"submissions": ' + "[" * 5000 + "]" * 5000 + "}",
                 "not JSON: nested too deep to read", id="nested-5000-deep"),
    pytest.param('{"seed": ' + "9" * 5000 + "}", "not JSON: Exceeds the limit (4300 digits)",
                 id="an-integer-of-5000-digits"),
    ('{"round": "prefix-products", "flavor": "torch", "seed": 1, "parts": []}',
     "this is one workspace's `grader check --json`"),
    ('{"round": "prefix-products", "seed": 1, "submissions": [{"path": "a"}]}',
     "not a `grader grade --json` document: submissions[0] has no 'flavor'"),
    ('{"schema_version": 2, "round": "prefix-products", "seed": 1, "submissions": []}',
     "written by a newer grader (schema version 2); this one reads versions up to 1: upgrade "
     "grader (pip install -U ml-interview-grader)"),
    ('{"schema_version": "1", "round": "prefix-products", "seed": 1, "submissions": []}',
     "schema_version should be a whole number, not \"1\""),
])
def test_bad_results_are_one_clear_line(tmp_path: Path, content: str, says: str) -> None:
    results = tmp_path / "results.json"
    results.write_text(content)
    done = invoke("report", results)
    assert done.exit_code == 1
    assert done.output == f"Error: {results}: {says}" + done.output.split(says, 1)[1]
    assert len(done.output.splitlines()) == 1 and "Traceback" not in done.output
