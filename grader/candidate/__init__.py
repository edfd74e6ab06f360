"""The candidate's side: what a candidate runs while practising beyond a plain check (watching
files, a timed mock round, topics explained, the workspace reset and its backups)."""
