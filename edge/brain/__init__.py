"""One companion's brain: perceptions in, decisions out, one at a time, with the LLM asked only
when no fast path (a sentence template, a slash command, a view with nothing new) decides.

Public: ``loop`` (``CompanionBrain``, ``BrainConfig``); the other modules are its parts.
"""
