"""The single-card training engine."""
