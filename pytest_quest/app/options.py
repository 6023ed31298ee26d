"""Placeholder: QuestOptions is moving here from plugin/options.py (replaced at merge)."""

from pytest_quest.plugin.options import QuestOptions

__all__ = ["QuestOptions"]
