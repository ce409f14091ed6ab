"""Writes for courses: import and export as files (content_io), chapters and courses."""
