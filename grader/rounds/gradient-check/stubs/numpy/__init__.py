"""The exercises of the gradient-check round (numpy flavor): fill in the three part files."""
