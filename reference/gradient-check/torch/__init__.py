"""Reference solutions of the gradient-check round, torch flavor."""
