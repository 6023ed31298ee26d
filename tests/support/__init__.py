"""Helpers shared by every layer of the test suite: paths, projects, the pytest runner."""
