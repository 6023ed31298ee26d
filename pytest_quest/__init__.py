"""pytest-quest."""
