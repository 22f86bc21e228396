"""Pydantic models of each config file kind: the typed view of one file, before cross-file checks.

Every model forbids unknown keys and is frozen; the JSON Schemas shipped in ``allotment/schemas``
are generated from these classes, so the two cannot drift apart unnoticed.
"""
