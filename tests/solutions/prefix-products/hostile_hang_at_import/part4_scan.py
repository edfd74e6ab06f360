"""Hostile: importing this file never finishes (after a debug print the scorecard must keep)."""

print("importing part 4: about to loop forever")
while True:
    pass
