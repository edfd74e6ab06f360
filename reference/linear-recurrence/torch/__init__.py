"""Reference solutions, torch flavor."""
