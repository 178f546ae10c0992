"""Export of a project's release: the public ScreenQA format, DocVQA and JSON Lines.

``service.release_export`` writes a folder; ``jobs`` runs it as a background job that
stores a zip through the storage backend. See ``docs/formats.md`` for the decisions.
"""
