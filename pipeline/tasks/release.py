"""Post-processing and export tasks."""
