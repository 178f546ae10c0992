"""Export of a project's release: the public ScreenQA format, DocVQA, JSON Lines and a Hugging Face
image folder with the screenshots (the table of formats: ``writers.EXPORT_FORMATS``).

``service.release_export`` writes a folder; ``jobs`` runs it as a background job that
stores a zip through the storage backend. See ``docs/formats.md`` for the decisions.
"""
