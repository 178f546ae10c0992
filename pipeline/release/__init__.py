"""The release: post-processing decides what is kept (``postprocess``, by the rules of
``pipeline.decisions``), short answers, export in the public formats, and import of a public release
(``imports``)."""
