"""The exercises of the normalization round (numpy flavor): fill in the three part files."""
