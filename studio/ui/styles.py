"""The studio's own CSS (passed to Gradio's launch(css=...)); one rule per fix, each saying why."""
from __future__ import annotations

CSS = """
/* Evaluate chat: Gradio floats the chatbot's toolbar over the top of the message list, so
   the first message (and any message scrolled to the top) sat under it. The list now starts below the toolbar. */
#ev-chat .bubble-wrap { margin-top: 30px; height: calc(100% - 30px); }
/* A viewer's page (page_role.py): the controls of owner-only actions look off and cannot be pressed; the server
   refuses them to a viewer anyway, and an enabled Start beside "Press Start" promised what it would not do. */
body.studio-viewer .owner-action { pointer-events: none; opacity: 0.45; filter: grayscale(1); }
"""
