"""Text that candidates control, on its way to a screen: cleaned of control sequences, shown as
written (never as rich markup), and kept from running as a spreadsheet formula. Then a hostile
submission, whose code prints and raises what a terminal would obey, through the real
`check`, `watch` and `grade --gradescope`, graded in the session's warm worker."""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.cli import cli
from grader.engine.safe_text import (
    clean,
    csv_cell,
    received,
    received_name,
    text,
    valid,
    valid_tree,
)
from grader.engine.workspace import load_workspace
from grader.render import views, watch_screen

from helpers import LentWorker, lend_pool, matches_golden, write_workspace

CONTROL = [chr(c) for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))]


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x1b]52;c;ZXZpbA==\x07b", "ab"),  # OSC 52: set the clipboard
    ("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"),  # OSC 8: a hyperlink
    ("\x1b]0;a title\x9c", ""),  # OSC ended by the 8-bit string terminator
    ("\x9d0;title\x07ok", "ok"),  # 8-bit OSC
    ("\x1bPq#0;2;0;0;0\x1b\\ok", "ok"),  # DCS (sixel)
    ("red \x1b[1;31mbold\x1b[0m and \x9b2Jgone", "red bold and gone"),  # 7- and 8-bit CSI
    ("\x1bc reset \x1b(B charset \x1b7", " reset  charset "),  # other ESC sequences
    ("\x1b]0;never terminated", "0;never terminated"),  # harmless once its ESC is gone
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("crlf\r\nline", "crlf\nline"),
    ("".join(CONTROL) + "x", "x"),
    ("evil\u202egpj.py", "evilgpj.py"),  # a right-to-left override ("Trojan Source")
    ("\u2066a\u2069\u2067b\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d", "ab"),
    ("שלום, مرحبا", "שלום, مرحبا"),  # right-to-left text itself stays
    ("ünïcode · ✓ · 中文 · [bold red]markup[/]", "ünïcode · ✓ · 中文 · [bold red]markup[/]"),
])
def test_control_sequences_and_characters_are_removed(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_rich_shows_markup_as_written() -> None:
    console = Console(file=StringIO(), width=80, color_system="truecolor", force_terminal=True)
    console.print(text("[link=http://evil]x[/link] [bold red]y[/] \x1b[2J:smile:"))
    assert console.file.getvalue() == "[link=http://evil]x[/link] [bold red]y[/] :smile:\n"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cell", "written"), [
    ("=HYPERLINK(\"http://evil\")", "'=HYPERLINK(\"http://evil\")"),
    ("+1", "'+1"), ("-1.5", "'-1.5"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"),
    ("\r=1", "'=1"), ("\x1b[31m=1", "'=1"), ("subs/ann", "subs/ann"), ("", ""),
    (" =1+1", "' =1+1"), ("\u3000=1", "'\u3000=1"), ("\uff1dHYPERLINK(1)", "'\uff1dHYPERLINK(1)"),
    ("\uff0b1", "'\uff0b1"), ("  plain", "  plain"), ("caf\u00e9", "caf\u00e9"),
])
def test_a_csv_cell_never_runs_as_a_formula(cell: str, written: str) -> None:
    assert csv_cell(cell) == written


# --- text that is not valid, or too long: made valid and bounded where it enters ----------

@pytest.mark.parametrize(("raw", "made"), [
    ("high \ud800 low \udfff", "high \ufffd low \ufffd"),  # lone halves of a UTF-16 pair
    ("\udbff\udc00", "\ufffd\ufffd"),  # a pair written as two code points is two halves
    ("byte \udcff\udc80", "byte \\xff\\x80"),  # bytes that were not UTF-8 (surrogateescape)
    ("nul\x00\x00 here", "nul here"),
    ("ünïcode 中文 \U0001f600 and \x1b[31m", "ünïcode 中文 \U0001f600 and \x1b[31m"),
    ("", ""),
])
def test_valid_text_is_what_every_encoder_takes(raw: str, made: str) -> None:
    assert valid(raw) == made
    made.encode("utf-8")  # strict


def test_received_text_is_cut_at_the_judges_cap_saying_how_much_more_there_was() -> None:
    assert received("abc", 3) == "abc"
    assert received("abcdef", 3) == "abc\n... (3 more characters not shown)"
    assert received("abcdef", 3, inline=True) == "abc ... (3 more characters not shown)"
    assert received("x" * 10_000_000, 4000).endswith("(9996000 more characters not shown)")
    assert received("\ud800" * 10, 2) == "\ufffd\ufffd\n... (8 more characters not shown)"
    assert received("no cap " * 1000, None) == "no cap " * 1000


def test_received_bytes_and_names_show_a_byte_that_is_not_utf8() -> None:
    assert received(b"caf\xc3\xa9 \xff\xfe", None) == "café \\xff\\xfe"
    name = os.fsdecode(b"subs/ann-\xff\xfe\x00")
    assert received_name(name) == received_name(os.fsencode(name)) == \
        "subs/ann-\\xff\\xfe\\u0000"
    assert received_name(Path(name)) == "subs/ann-\\xff\\xfe\\u0000"
    assert received_name("a\nb\r\nc\td") == "a\\nb\\r\\nc\\td"  # one line
    long = received_name("n" * 5000)
    assert long == "n" * 1000 + " ... (4000 more characters not shown)"
    with pytest.raises(TypeError):
        received(3, 10)  # type: ignore[arg-type]


def test_a_document_is_made_valid_throughout_keys_included() -> None:
    doc = {"\ud800": ["a\udcff", ("\x00", 1.5, None, True)], "n": {"k": "\udfff"}}
    assert valid_tree(doc) == {"\ufffd": ["a\\xff", ["", 1.5, None, True]],
                               "n": {"k": "\ufffd"}}


def test_clean_text_is_valid_text_too() -> None:
    assert clean("a\ud800\x1b[2Jb\udcff\x00") == "a\ufffdb\\xff"
    console = Console(file=StringIO(), width=80, color_system=None)
    console.print(text("\ud800 [bold]x[/]"))
    assert console.file.getvalue() == "\ufffd [bold]x[/]\n"  # type: ignore[attr-defined]


# --- a hostile submission through the real commands ----------------------------------------

HOSTILE_PART1 = '''\
"""Prints what a terminal would obey, and raises with rich markup in its message."""
print("\\x1b]52;c;ZXZpbA==\\x07[link=http://evil]click me[/link]\\x1b[2J")
raise RuntimeError("\\x1b[31m[bold red]grader crashed[/bold red]\\x1b]0;owned\\x07")
'''
SPY_NAME = "\x1b[31mspy\x07.py"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A torch workspace whose part 1 is HOSTILE_PART1, with a helper whose name holds
    control characters and whose code the review scan flags."""
    root = write_workspace(tmp_path / "ws", "torch")
    (root / "exercises" / "part1_inplace.py").write_text(HOSTILE_PART1)
    (root / "exercises" / SPY_NAME).write_text("import socket\n")
    return root


def test_the_scorecard_shows_what_it_printed_and_raised_as_written(runner: CliRunner,
                                                                   hostile: Path) -> None:
    done = runner.invoke(cli, ["check", "part1", "--seed", "3", "--workspace", str(hostile)],
                         env={"COLUMNS": "100"})
    assert done.exit_code == 1, done.output
    assert matches_golden("scorecard-hostile-100.txt", done.stdout)
    assert not any(c in done.stdout for c in CONTROL)


def test_the_watch_view_shows_a_changed_file_name_as_written(grading, hostile: Path) -> None:
    console = Console(file=StringIO(), width=100, color_system=None)
    workspace = load_workspace(hostile)
    request = grading.request(hostile, "torch", ["part1"], seed=3)
    session = watch_screen.WatchSession(workspace, request,
                                        lambda: LentWorker(grading.worker), console,
                                        lambda: 0.0, None)
    session.on_change([str(hostile / "exercises" / SPY_NAME)])
    session.close()
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.startswith("grader watch · changed: spy.py\n")
    assert "[link=http://evil]click me[/link]" in shown
    assert "[bold red]grader crashed[/bold red]" in shown
    assert not any(c in shown for c in CONTROL)


def test_gradescope_shows_their_output_and_the_flags_as_text(
        grading, hostile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker), jobs=1)
    config = tmp_path / "grader.toml"
    config.write_text('flavor = "torch"\nparts = ["part1"]\ntimeout = 30\n')
    results = tmp_path / "results.json"
    done = CliRunner().invoke(cli, ["grade", str(hostile), "--gradescope", str(results),
                                    "--config", str(config), "--seed", "3"])
    assert done.exit_code == 0, done.output
    doc: dict[str, Any] = json.loads(results.read_text())
    assert doc["output"] == (
        "Score 0.0/20.0\n"
        "  part1 In-place forward: 0.0/20.0\n"
        "Notes: part1: could not import part1_inplace.py: RuntimeError: [bold red]grader "
        "crashed[/bold red]\n"
        "flagged for review: \\u001b[31mspy\\u0007.py:1 import socket: opens sockets\n"
        "Hidden checks against the references: strong evidence, not proof. A skip is not a "
        "pass.")
    first = doc["tests"][0]["output"]
    assert first == (
        "[error] could not import part1_inplace.py:\n"
        "RuntimeError: [bold red]grader crashed[/bold red]\n"
        '  at exercises/part1_inplace.py, line 3: raise RuntimeError("\\x1b[31m[bold red]grader '
        'crashed[/bold red]\\x1b]0;owned\\x07")\n'
        "your code printed:\n"
        "[link=http://evil]click me[/link]")
    shown = [doc["output"], *(test["output"] for test in doc["tests"])]
    assert not any(c in said for said in shown for c in CONTROL)


def test_a_follow_up_shows_the_error_their_code_raised_as_written() -> None:
    console = Console(file=StringIO(), width=60, color_system=None)
    views.render_followup(console, "part1", {"shown": [{
        "title": "your in-place forward", "snippet": "P = prefix_products_out(W, P)",
        "raised": {"type": "Runtime\x1b[2JError", "message": "[red]boom[/red]\x1b]52;c;eA==\x07"},
        "line": "P[i] = P[i - 1] @ W[i]\x9b2J"}]}, "Why?")
    assert console.file.getvalue() == (  # type: ignore[attr-defined]
        "───────────── Interviewer's follow-up · part1 ──────────────\n"
        "╭─ your in-place forward ──────────────────────────────────╮\n"
        "│ P = prefix_products_out(W, P)                            │\n"
        "│ RuntimeError: [red]boom[/red]                            │\n"
        "│ the line: P[i] = P[i - 1] @ W[i]                         │\n"
        "╰──────────────────────────────────────────────────────────╯\n"
        "╭─ Question ───────────────────────────────────────────────╮\n"
        "│ Why?                                                     │\n"
        "╰──────────────────────────────────────────────────────────╯\n")


@pytest.mark.parametrize("hidden", [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u034f",
    "\u3164", "\u115f", "\u2800", "\u00a0", "\u2007", "\u3000", "\ufe0f", "\U000e0101",
    "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\u202e", "\x00",
])
def test_two_names_that_differ_never_show_alike_and_stay_on_one_line(hidden: str) -> None:
    """A name with a character that prints as nothing (or breaks the line) next to the same
    name without it: a row that could pass for a classmate's, or forge a line of its own."""
    plain, sly = received_name("class/bob"), received_name(f"class/bob{hidden}")
    assert sly != plain and sly.startswith("class/bob\\")
    for shown in (sly, received(f"numpy{hidden}zed: forged", 100, inline=True)):
        assert shown.isprintable() and len(shown.splitlines()) == 1, repr(shown)


def test_names_in_any_script_are_shown_as_written() -> None:
    for name in ("José", "Zoë-Ångström", "王小明", "Dvořák", "ناصر", "a b", "Иван",
                 "Ivan-Иван", "Σωκράτης"):
        assert received_name(name) == name


@pytest.mark.parametrize(("sly", "shown"), [
    ("class/b\u043eb", "class/b\\u043eb"),       # a Cyrillic o among Latin letters
    ("class/\u0391lice", "class/\\u0391lice"),   # a Greek capital alpha
    ("p\u0430yp\u0430l", "p\\u0430yp\\u0430l"),
])
def test_a_letter_from_a_lookalike_script_inside_a_word_is_shown_as_its_code(
        sly: str, shown: str) -> None:
    """A word mixing Latin, Greek and Cyrillic letters passes for another at a glance: the
    letters of its lesser scripts show as codes, so the row cannot pass for a classmate's."""
    assert received_name(sly) == shown


@pytest.mark.parametrize(("sly", "shown"), [
    ("class/\u0435\u0445\u0435\u0441.py", "class/\\u0435\\u0445\\u0435\\u0441.py"),  # Cyrillic
    ("bob/\u0421\u0430\u0440\u0430", "bob/\\u0421\\u0430\\u0440\\u0430"),
    ("\u039f\u03bf/part1", "\\u039f\\u03bf/part1"),                  # Greek Oo
])
def test_a_whole_word_of_letters_that_pass_for_latin_is_shown_as_codes_beside_latin(
        sly: str, shown: str) -> None:
    """A Cyrillic or Greek word made only of letters that look Latin passes for a Latin word
    in a Latin name; where no Latin letter is near, or a letter does not pass (Иван), it is
    shown as written (test_names_in_any_script_are_shown_as_written)."""
    assert received_name(sly) == shown
    assert received_name("\u0421\u0430\u0440\u0430") == "\u0421\u0430\u0440\u0430"
