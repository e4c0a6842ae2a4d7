"""The login guard in front of Gradio's routes: failed-login backoff and nothing for anonymous callers.

Why our own middleware: Gradio 6 checks the password on ``POST /login`` with no limit on attempts,
and with a login set it still embeds the full API description (every endpoint and its parameters)
in the page it serves to anonymous visitors, and answers ``/gradio_api/cancel`` and ``/reset``
without a login. A pure ASGI middleware (``launch(app_kwargs={"middleware": [...]})``) sits in front
of all of them and reads Gradio's own session cookie, so nothing in Gradio is patched.
"""
from __future__ import annotations

import json
import re
import threading
import time
from http.cookies import SimpleCookie
from typing import Any, Callable

LOCK_AFTER = 5         # failed logins from one client before it must wait
FIRST_LOCK_S = 30      # the first wait; each further failure doubles it
MAX_LOCK_S = 15 * 60
ANON_REFUSED = ("/gradio_api/cancel", "/gradio_api/reset", "/gradio_api/upload", "/gradio_api/queue/join")
_API_INFO = re.compile(rb"window\.gradio_api_info = .*?;</script>", re.S)
_EMPTY_INFO = b'window.gradio_api_info = {"named_endpoints": {}, "unnamed_endpoints": {}};</script>'


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


class AuthGuard:
    """ASGI middleware; ``enabled`` is False when the studio runs without a login."""

    def __init__(self, app: Any, enabled: bool = True, clock: Callable[[], float] = time.monotonic):
        self.app = app
        self.enabled = enabled
        self.backoff = LoginBackoff(clock)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.enabled:
            return await self.app(scope, receive, send)
        path = scope.get("path", "").rstrip("/") or "/"
        client = (scope.get("client") or ("?",))[0]
        if path == "/login" and scope.get("method") == "POST":
            return await self._login(scope, receive, send, client)
        if self._logged_in(scope):
            return await self.app(scope, receive, send)
        if any(path == p or path.startswith(p + "/") for p in ANON_REFUSED):
            return await _json(send, 401, {"detail": "Not authenticated"})
        if scope.get("method") == "GET" and not path.startswith(("/gradio_api", "/assets", "/static")):
            return await self._without_api_info(scope, receive, send)
        return await self.app(scope, receive, send)

    @staticmethod
    def _logged_in(scope: dict) -> bool:
        app = scope.get("app")
        tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
        if tokens is None:
            return False
        cookie = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:  # noqa: BLE001 - a malformed cookie header is simply not a login
                    return False
        for key in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
            if key in cookie and cookie[key].value in tokens:
                return True
        return False

    async def _login(self, scope: dict, receive: Any, send: Any, client: str) -> None:
        wait = self.backoff.wait_s(client)
        if wait:
            return await _json(send, 429, {"detail": f"Too many failed logins: try again in {wait} s"},
                               [(b"retry-after", str(wait).encode())])
        status: list[int] = []

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, receive, watch)
        if status and status[0] == 200:
            self.backoff.succeeded(client)
        elif status and status[0] in (400, 401, 403):
            self.backoff.failed(client)

    async def _without_api_info(self, scope: dict, receive: Any, send: Any) -> None:
        """Serve the page (the login form) with the API description emptied."""
        start: dict[str, Any] = {}
        body = bytearray()

        async def buffer(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                return await send(message)
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            data = _API_INFO.sub(_EMPTY_INFO, bytes(body))
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(data)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, buffer)


async def _json(send: Any, status: int, content: dict, headers: list | None = None) -> None:
    data = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def auth_guard_middleware(enabled: bool = True, clock: Callable[[], float] = time.monotonic) -> Any:
    from starlette.middleware import Middleware
    return Middleware(AuthGuard, enabled=enabled, clock=clock)
