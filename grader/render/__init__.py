"""The renderers: scorecards, the rehearsal views, the instructor's tables and the cohort
report. They draw what the engine computed and decide nothing."""
