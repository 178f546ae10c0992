"""The lead's analysis of a project: the papers' figures next to the project's own (docs/analytics.md)."""
