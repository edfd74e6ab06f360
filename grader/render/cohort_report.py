"""The cohort report: one self-contained HTML file made from a Cohort (grader/coach/cohort.py).

matplotlib draws the score distributions as SVG, inlined into the page, and jinja2 fills
grader/templates/cohort.html.j2; the styles and the one small script are inline too, so the file
opens from disk with no network. Both libraries are the optional [report] extra: a grader that
never writes a report (a candidate's, Gradescope's) does not need them, and a coach who asks for
a report without them gets one line saying what to install, before any grading starts.
"""

from __future__ import annotations

import importlib.util
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from grader import REPORT_INSTALL, __version__
from grader.coach.batch import BatchDoc, SubmissionDoc
from grader.coach.cohort import Cohort, Distribution, cohort
from grader.coach.review import flag_text
from grader.engine.results import HONESTY_NOTE, PartDoc, points_text
from grader.engine.safe_text import clean, valid
from grader.engine.state import write_bytes_atomic

if TYPE_CHECKING:
    from matplotlib.container import BarContainer
    from matplotlib.figure import Figure

EXTRA = ("matplotlib", "jinja2")
TEMPLATES = Path(__file__).resolve().parent / "templates"
BINS = 10
COLOURS = {"bar": "#4c72b0", "mean": "#c44e52"}


class ReportError(Exception):
    """The report cannot be written (its libraries are missing); the message says why."""


def require_extra() -> None:
    """Stop early, in one line, when the [report] extra is not installed."""
    missing = [name for name in EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        raise ReportError(f"the cohort report needs {' and '.join(EXTRA)} (missing: "
                          f"{', '.join(missing)}); install them with: {REPORT_INSTALL}")


def histogram_svg(column: Distribution, chart_id: str, size: tuple[float, float]) -> str:
    """The column's distribution as an <svg> element for the page."""
    return inline_svg(histogram(column, size), chart_id)


def histogram(column: Distribution, size: tuple[float, float]) -> Figure:
    """The column's scores in BINS bins from 0 to its maximum, each bar labelled with its
    count, the mean a dashed line."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    top = column.max_score if column.max_score > 0 else max(column.scores, default=1.0) or 1.0
    width, height = size
    figure = Figure(figsize=size)
    # Fixed margins (in inches) rather than a layout engine, which would draw the figure twice.
    figure.subplots_adjust(left=0.55 / width, right=1 - 0.15 / width, bottom=0.45 / height,
                           top=1 - 0.1 / height)
    axes = figure.add_subplot()
    counts, _, bars = axes.hist(column.scores, bins=[top * i / BINS for i in range(BINS + 1)],
                                color=COLOURS["bar"], edgecolor="white")
    axes.bar_label(cast("BarContainer", bars), labels=[f"{c:.0f}" if c else "" for c in counts],
                   fontsize=8)
    if column.scores:
        axes.axvline(column.mean, color=COLOURS["mean"], linestyle="--", linewidth=1)
    axes.set_xlim(0, top)
    axes.set_ylim(0, max(max(counts, default=0), 1) * 1.2)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("points", fontsize=8)
    axes.set_ylabel("submissions", fontsize=8)
    axes.tick_params(labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return figure


def inline_svg(figure: Figure, chart_id: str) -> str:
    """The figure as an <svg> element with text kept as text (the page's font, searchable),
    no date in it (the same results make the same page), and its ids prefixed with `chart_id`
    (several charts share one page, and ids must not clash)."""
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": chart_id}):
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    svg = out.getvalue()
    return re.sub(r'(\bid="|url\(#|href="#)', rf"\g<1>{chart_id}-", svg[svg.index("<svg"):])


@dataclass(frozen=True)
class Row:
    """One submission as the page lists it: its number (from 1, as `grade` numbers rows), a
    short name, and its part results by column."""

    number: int
    name: str
    submission: SubmissionDoc
    cells: list[PartDoc | None]


def rows(cohort_: Cohort) -> list[Row]:
    columns = [p.id for p in cohort_.parts]
    found = []
    for index, sub in enumerate(cohort_.submissions):
        by_id = {p["id"]: p for p in sub["parts"]}
        found.append(Row(index + 1, Path(sub["path"]).name or sub["path"], sub,
                         [by_id.get(c) for c in columns]))
    return found


def _shown(value: object) -> object:
    """Every value the template prints: text cleaned of control characters (grader/safe_text),
    then HTML-escaped by jinja; the inlined charts are markup the grader made, kept as is."""
    from markupsafe import Markup

    return clean(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def render_html(doc: BatchDoc) -> str:
    """The whole page for one `grade --json` document."""
    require_extra()
    import jinja2
    from markupsafe import Markup

    summary = cohort(doc)
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                                     autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True,
                                     finalize=_shown)
    environment.filters["part_of"] = lambda check_id: check_id.split(".", 1)[0]
    environment.globals["flag_text"] = flag_text
    environment.globals["points_text"] = points_text
    charts = {"total": Markup(histogram_svg(summary.total, "chart-total", (6.4, 2.6))),
              **{p.id: Markup(histogram_svg(p, f"chart-{p.id}", (3.2, 2.2)))
                 for p in summary.parts}}
    return environment.get_template("cohort.html.j2").render(
        cohort=summary, rows=rows(summary), charts=charts, honesty=HONESTY_NOTE,
        version=__version__)


def write_report(path: Path, doc: BatchDoc) -> None:
    """The page, valid text whatever the document holds (a results file saved by an older
    grader may hold what no encoder takes), so it is written for every row or none."""
    write_bytes_atomic(path, valid(render_html(doc)).encode("utf-8"))
