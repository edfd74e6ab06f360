"""The candidate's side: what a candidate runs while practising (a grading pass, as check and
watch run it, a timed mock round, topics explained, the workspace reset and its backups)."""
