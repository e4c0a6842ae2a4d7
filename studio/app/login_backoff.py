"""Failed logins per client and how long each must wait: the rule the login guard (studio/web/guard.py) applies to
Gradio's ``POST /login``, which has no limit of its own. After LOCK_AFTER failures a client waits FIRST_LOCK_S,
doubled at each further failure up to MAX_LOCK_S; a success forgets it.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

LOCK_AFTER = 5         # failed logins from one client before it must wait
FIRST_LOCK_S = 30      # the first wait; each further failure doubles it
MAX_LOCK_S = 15 * 60


class LoginBackoff:
    """Failed logins per client; after LOCK_AFTER failures the client waits, longer each time."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self._fails: dict[str, tuple[int, float]] = {}  # client -> (failures, locked until)

    def wait_s(self, client: str) -> int:
        with self._lock:
            _, until = self._fails.get(client, (0, 0.0))
        return max(0, int(until - self.clock() + 0.999))

    def failed(self, client: str) -> None:
        with self._lock:
            n, _ = self._fails.get(client, (0, 0.0))
            n += 1
            until = 0.0
            if n >= LOCK_AFTER:
                until = self.clock() + min(MAX_LOCK_S, FIRST_LOCK_S * 2 ** (n - LOCK_AFTER))
            self._fails[client] = (n, until)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._fails.pop(client, None)
