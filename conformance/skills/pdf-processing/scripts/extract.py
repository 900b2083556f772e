"""Print the text of a PDF (a fixture file: served, never run)."""
