"""Tables that lose no text at any width.

Piped output is 80 columns and a split pane may give 60; rich's defaults there cut a cell with
"…" (a word wider than its column), and a column that keeps a minimum width or refuses to wrap
can push the table past the screen, where its right edge is cropped. A check id, a title or a
round's name cut short is information lost, so every table a command prints goes through
`folding`: prose wraps, and a word too long for its column folds onto the next line.
"""

from __future__ import annotations

from rich.table import Table


def folding(table: Table) -> Table:
    """`table` with nothing cut: every column folds what it cannot fit, and none keeps a
    minimum width. Columns declared `no_wrap` (ids, numbers) stay on one line while the prose
    columns can wrap to make room, and fold only when the terminal leaves no other way."""
    for column in table.columns:
        column.overflow = "fold"
        column.min_width = None
    return table
