"""Hostile: importing this file never finishes."""

while True:
    pass
