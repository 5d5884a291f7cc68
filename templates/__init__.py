"""Jinja2 templates: user utterances, simulated-user replies, policy text, dataset cards."""
