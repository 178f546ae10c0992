"""Export tasks."""
