"""Data pipeline: readers, conversion to instruction format, templates, tokenization, report."""
