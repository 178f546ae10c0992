"""The release: decide what is kept (``decide``, ``agreement``, ``postprocess``), short answers,
export in the public formats, and import of a public release (``imports``)."""
