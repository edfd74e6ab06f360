"""The exercises of the linear-recurrence round (torch flavor): fill in the part files."""
