"""The exercises of the gradient-check round (torch flavor): fill in the three part files."""
