"""The exercises of the matmul-grad round (numpy flavor): fill in the two part files."""
