"""The exercises of the matmul-grad round (torch flavor): fill in the three part files."""
