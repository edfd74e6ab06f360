"""The exercises of the prefix-products round (numpy flavor): fill in the four part files."""
