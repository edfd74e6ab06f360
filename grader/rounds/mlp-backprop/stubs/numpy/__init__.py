"""The exercises of the mlp-backprop round (numpy flavor): fill in the four part files."""
