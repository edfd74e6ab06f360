"""The coach's side: grading a class (submissions staged, graded in batch, the cohort's
figures), the platforms' documents (Gradescope, GitHub Classroom), the review scan, and the
self-check of every round."""
