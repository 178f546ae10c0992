"""Post-processing and short-answer tasks."""
