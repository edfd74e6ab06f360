"""The exercises of the mlp-backprop round (torch flavor): fill in the four part files."""
