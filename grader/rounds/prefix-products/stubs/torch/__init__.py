"""The exercises of the prefix-products round (torch flavor): fill in the four part files."""
