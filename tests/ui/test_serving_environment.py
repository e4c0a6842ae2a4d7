"""The environment a studio server runs Gradio in: set once for the page and the demo (studio/ui/app.py)."""
from __future__ import annotations

import os
import time

import gradio as gr
import pytest

from studio.ui.app import serving_environment


def test_gradio_does_not_summarise_its_timings_after_every_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gradio's queue re-summarises its recorded event timings (a pandas group-by) after every event unless told
    otherwise; the page polls every 2 s, so a server would spend ~20 ms of CPU per poll on a page it does not serve."""
    for name in ("GRADIO_ANALYTICS_CACHE_FREQUENCY", "FORWARDED_ALLOW_IPS"):
        monkeypatch.delenv(name, raising=False)
    serving_environment([])
    queue = gr.Blocks()._queue
    records = [{"function": f"fn{i % 40}", "status": "success", "process_time": 0.01} for i in range(3000)]
    started = time.process_time()
    for _ in range(50):  # fifty events, each recorded and then summarised, as the queue does after each event
        queue.events_recorded += 1
        queue.compute_analytics_summary(records)
    assert time.process_time() - started < 0.2, "Gradio summarised its timings after every event"
    assert os.environ["FORWARDED_ALLOW_IPS"] == "no-proxy-trusted"
