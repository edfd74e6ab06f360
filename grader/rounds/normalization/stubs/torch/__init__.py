"""The exercises of the normalization round (torch flavor): fill in the three part files."""
