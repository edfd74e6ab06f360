"""The engine, which knows no round: the round model and its registry, one grading pass, the
results and their triage, the rounds' prose and references, the workspace and its state, and the
guards every command shares (the integrity check, shapes at the receiving edge, safe text)."""
