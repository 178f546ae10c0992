"""Import tasks."""
