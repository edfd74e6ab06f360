"""Reference solutions, numpy flavor."""
