"""Gradio web UI: one module per tab, assembled in app.py. Never imports torch."""
