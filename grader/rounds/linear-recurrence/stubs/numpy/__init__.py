"""The exercises of the linear-recurrence round (numpy flavor): fill in the part files."""
