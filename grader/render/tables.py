"""Tables that lose no text at any width.

Piped output is 80 columns and a split pane may give 60; rich's defaults there cut a cell with
"…" (a word wider than its column), and a column that keeps a minimum width or refuses to wrap
can push the table past the screen, where its right edge is cropped. A check id, a title or a
round's name cut short is information lost, so every table a command prints goes through
`folding`: cells wrap, and a word too long for its column folds onto the next line.
"""

from __future__ import annotations

from rich.table import Table


def folding(table: Table) -> Table:
    """`table` with every column wrapping and folding: no minimum width, nothing kept on one
    line, nothing cut."""
    for column in table.columns:
        column.overflow = "fold"
        column.no_wrap = False
        column.min_width = None
    return table
