"""The perception nodes: what the robot sees (``camera``) and hears (``microphone``), each
published as perceptions for the brains. ``narration`` is the one-line-per-event output they share.
"""
