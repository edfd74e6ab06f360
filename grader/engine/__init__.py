"""The engine's ground, which knows no round: the round model and its registry, the results
and their triage, the rounds' prose and references, the workspace and its state, and the guards
every command shares (the integrity check, shapes at the receiving edge, safe text, the timing
method, the default limits, the instructor's secret). It imports nothing of the rest of
grader."""
