"""The check engine: generic check kinds (kinds.py) that a round's check table (table.py)
configures, the judge-side pieces they share (cases, comparisons, known mistakes), and the
plan / probe / verdict shape of every check (base.py)."""
