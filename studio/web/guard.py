"""The login guard in front of Gradio's routes: failed-login backoff (studio/app/login_backoff.py) and nothing for
anonymous callers.

Why our own middleware: Gradio 6 checks the password on ``POST /login`` with no limit on attempts,
and with a login set it still embeds the full API description (every endpoint and its parameters)
in the page it serves to anonymous visitors, and answers ``/gradio_api/cancel`` and ``/reset``
without a login. A pure ASGI middleware (``launch(app_kwargs={"middleware": [...]})``) sits in front
of all of them and reads Gradio's own session cookie, so nothing in Gradio is patched.

Uploads belong to the login sessions that made them: Gradio keeps every upload in one shared cache and
serves it to any logged-in caller who knows its path, so the guard records which session tokens
uploaded which file (identical content lands on one path: each uploader is an owner, none loses it),
answers 404 to the others on every file route, and refuses an event call whose payload names another
session's upload (teammates often share one account, so the session, not the user name, is the owner).
Every event call (queue/join and the direct API routes, private events included) passes one check
here, so a handler written tomorrow is covered without doing anything.

Roles: a login may be an ``owner`` (everything) or a ``viewer`` (results, playground, chat, batch
prediction). A handler made by ``studio.ui.handlers.owner_action`` is refused to viewers here too, on the
server, whatever the page shows.
"""
from __future__ import annotations

import errno
import json
import os
import re
from collections import OrderedDict
import time
from http.cookies import SimpleCookie
from typing import Any, Callable
from urllib.parse import unquote

from ..app.login_backoff import LoginBackoff
from ..app.roles import is_owner_only
from ..app.upload_quota import KEEP_S, UploadPolicy, remove, sweep
from ..errors import StudioError
from ..words.catalog import msg
from ..words.error_words import page_message
from .session_lang import from_headers

# what an anonymous caller may reach under /gradio_api: the login page's own checks, nothing else
ANON_ALLOWED = ("/gradio_api/login_check", "/gradio_api/app_id", "/gradio_api/startup-events")
_API_INFO = re.compile(rb"window\.gradio_api_info = .*?;</script>", re.S)
_EMPTY_INFO = b'window.gradio_api_info = {"named_endpoints": {}, "unnamed_endpoints": {}};</script>'
UPLOAD = "/gradio_api/upload"
FILE_ROUTES = ("/gradio_api/file=", "/file=", "/gradio_api/file/")
EVENT_ROUTES = ("/gradio_api/queue/join", "/gradio_api/run/", "/gradio_api/api/", "/gradio_api/call/")
MAX_EVENT_BODY = 64 * 2**20  # an event payload larger than this is refused before it is parsed
MAX_OWNED = 20_000     # remembered uploads (oldest forgotten first); each is one path and one token


class AuthGuard:
    """ASGI middleware; ``enabled`` is False when the studio runs without a login."""

    def __init__(self, app: Any, enabled: bool = True, clock: Callable[[], float] = time.monotonic,
                 roles: dict[str, str] | None = None, uploads: UploadPolicy | None = None):
        self.app = app
        self.enabled = enabled
        self.roles = dict(roles or {})  # user -> 'owner' | 'viewer'; a user not listed is an owner
        self.backoff = LoginBackoff(clock)
        self._owners: OrderedDict[str, set[str]] = OrderedDict()  # real path of an upload -> session tokens
        self.uploads = uploads or UploadPolicy()  # per-role sizes, per-login quotas (upload_quota.py)
        self._swept = 0.0

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "").rstrip("/") or "/"
        if not self.enabled:  # one person's studio: no roles or quotas, but a full disk still gets words
            if path == UPLOAD and scope.get("method") == "POST":
                return await self._upload(scope, receive, send, None)
            return await self.app(scope, receive, send)
        client = (scope.get("client") or ("?",))[0]
        if path == "/login" and scope.get("method") == "POST":
            return await self._login(scope, receive, send, client)
        token = self._token(scope)
        if token is not None:
            if path == UPLOAD and scope.get("method") == "POST":
                return await self._upload(scope, receive, send, token)
            served = next((path[len(r):] for r in FILE_ROUTES if path.startswith(r)), None)
            if served is not None:
                return await self._file(scope, receive, send, served, token)
            if scope.get("method") == "POST" and any(path.startswith(r) for r in EVENT_ROUTES):
                return await self._event(scope, receive, send, path, token)
            length = _content_length(scope)  # Gradio's other body routes (a screen recording, a stream) likewise
            role = self.role(scope, token)
            if length is not None and length > self.uploads.body_limit(role):
                return await _json(send, 413, {"detail": _msg("upload.role_too_big", _lang(scope), mb=length / 2**20,
                                                              limit=self.uploads.body_limit(role) / 2**20,
                                                              role=role)})
            return await self.app(scope, receive, send)
        if path.startswith("/gradio_api") and path not in ANON_ALLOWED or path in ("/config", "/info"):
            return await _json(send, 401, {"detail": "Not authenticated"})
        if scope.get("method") == "GET" and not path.startswith(("/assets", "/static")):
            return await self._without_api_info(scope, receive, send)
        return await self.app(scope, receive, send)

    def role(self, scope: dict, token: str) -> str:
        tokens = getattr(scope.get("app"), "tokens", None) or {}
        return self.roles.get(tokens.get(token, ""), "owner")

    def _foreign(self, token: str, value: Any, depth: int = 0) -> bool:
        """True when ``value`` (any JSON) names an upload that this session did not make."""
        if depth > 64:
            return True  # a payload nested this deep is no form's value
        if isinstance(value, str):
            if not value.startswith("/") and "://" not in value:
                return False
            local = value.split("file=", 1)[-1] if "file=" in value else value
            owners = self._owners.get(os.path.realpath(local)) if local.startswith("/") else None
            return owners is not None and token not in owners
        if isinstance(value, dict):
            return any(self._foreign(token, v, depth + 1) for v in value.values())
        if isinstance(value, list):
            return any(self._foreign(token, v, depth + 1) for v in value)
        return False

    async def _file(self, scope: dict, receive: Any, send: Any, served: str, token: str) -> None:
        """Another session's upload, a missing file and a refused path all answer the same 404."""
        owners = self._owners.get(os.path.realpath(unquote(served)))
        if owners is not None and token not in owners:
            return await _json(send, 404, {"detail": "File not found"})
        start: dict[str, Any] = {}

        async def same_refusal(message: dict) -> None:
            if message["type"] == "http.response.start":
                if message["status"] in (403, 404):
                    start["refused"] = True
                    return await _json(send, 404, {"detail": "File not found"})
            elif start.get("refused"):
                return None
            await send(message)

        await self.app(scope, receive, same_refusal)

    async def _event(self, scope: dict, receive: Any, send: Any, path: str, token: str) -> None:
        """Every event call: owner-only handlers refused to viewers; no other session's upload in the data."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > MAX_EVENT_BODY:
                return await _json(send, 413, {"detail": "The request is too large"})
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if isinstance(body, dict):
            if self.role(scope, token) != "owner" and _owner_only(scope, path, body):
                user = (getattr(scope.get("app"), "tokens", None) or {}).get(token, "")
                return await _json(send, 403, {"detail": page_message(StudioError.of("app.owner_only", user=user),
                                                                      _lang(scope))})
            if self._foreign(token, body.get("data")):
                return await _json(send, 404, {"detail": "File not found"})
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    def _token(scope: dict) -> str | None:
        """The caller's valid Gradio session token, or None when not logged in."""
        app = scope.get("app")
        tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
        if tokens is None:
            return None
        cookie = SimpleCookie()
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:  # noqa: BLE001 - a malformed cookie header is simply not a login
                    return None
        for key in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
            if key in cookie and cookie[key].value in tokens:
                return cookie[key].value
        return None

    async def _upload(self, scope: dict, receive: Any, send: Any, token: str | None) -> None:
        """Pass the upload through within this role's size, keep it within this login's quota, and remember the
        paths it answers with as this session's. A full disk is a message in the page's language."""
        role = self.role(scope, token) if token else "owner"
        limit = self.uploads.body_limit(role)
        length = _content_length(scope)
        lang = _lang(scope)
        if length is None and role != "owner":  # counted before it is read: a viewer says how much it sends
            return await _json(send, 411, {"detail": _msg("upload.length", lang)})
        if length is not None and length > limit:
            return await _json(send, 413, {"detail": _msg("upload.role_too_big", lang, mb=length / 2**20,
                                                          limit=limit / 2**20, role=role)})
        upload_dir = getattr(scope.get("app"), "uploaded_file_dir", None)
        before = _temp_files(upload_dir)
        start: dict[str, Any] = {}
        body = bytearray()

        async def keep(message: dict) -> None:  # the answer is a short JSON list: held until it is checked
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))

        try:
            await self.app(scope, receive, keep)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # Gradio writes each part to a temp file in the upload folder and leaves it on an OSError
            remove([p for p in _temp_files(upload_dir) - before])
            return await _json(send, 507, {"detail": _msg("disk.full", lang, what=_msg("disk.what_upload", lang))})
        paths = _paths(bytes(body)) if start.get("status") == 200 else []
        if any(not self.uploads.allowed(role, p) for p in paths):
            remove([p for p in paths if token not in self._owners.get(os.path.realpath(p), set())])  # viewers only
            return await _json(send, 403, {"detail": _msg("upload.viewer_kind", lang)})
        await send(start)
        await send({"type": "http.response.body", "body": bytes(body)})
        if token is None:
            return
        for p in paths:
            real = os.path.realpath(p)
            self._owners.setdefault(real, set()).add(token)
            self._owners.move_to_end(real)
        while len(self._owners) > MAX_OWNED:
            self._owners.popitem(last=False)
        self._keep_quota(scope, token, role, [os.path.realpath(p) for p in paths], upload_dir)

    def _keep_quota(self, scope: dict, token: str, role: str, paths: list[str], upload_dir: str | None) -> None:
        """This login's oldest uploads go when it is over its quota; the whole cache is swept of day-old files."""
        tokens = getattr(scope.get("app"), "tokens", None) or {}
        user = tokens.get(token, token)
        others = {p for p, owners in self._owners.items() if any(tokens.get(t, t) != user for t in owners)}
        gone = self.uploads.kept(user, paths, role, others)
        remove(gone)
        for p in gone:
            self._owners.pop(p, None)
        now = time.time()
        if upload_dir and now - self._swept > KEEP_S / 24:  # at most hourly: a walk of the cache
            self._swept = now
            sweep(upload_dir)

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


def _owner_only(scope: dict, path: str, body: dict) -> bool:
    """Whether the event this call names is marked owner-only (an unknown event is left to Gradio).

    The event is found the way Gradio's own routes find it (``route_utils.get_fn``): ``fn_index`` read through
    Gradio's request model, which is lax (``"95"`` and ``95.0`` are event 95), else the route's API name; the
    ``/call`` routes take the name alone (their body has no ``fn_index``)."""
    try:
        from gradio.data_classes import PredictBody  # start-up: gradio, 4.3 s at import; this runs per event only
        blocks = scope["app"].get_blocks()
        fns = blocks.fns
        session = body.get("session_hash")
        if isinstance(session, str) and session in blocks.state_holder:
            fns = blocks.state_holder[session].blocks_config.fns
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if path.startswith("/gradio_api/call/"):
            index = None
        else:
            try:
                index = PredictBody.model_validate(body).fn_index
            except ValueError:  # Gradio answers 422 to a body its model refuses: nothing runs
                return False
        if index is not None:
            fn = fns.get(index)
        else:
            fn = next((f for f in fns.values() if f.api_name == name), None)
    except Exception:  # noqa: BLE001 - no app to ask (tests of the middleware alone): nothing is marked
        return False
    return fn is not None and is_owner_only(fn.fn)


def _content_length(scope: dict) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _lang(scope: dict) -> str:
    # start-up: starlette, 0.07 s at import; `studio webui --help` loads this module
    from starlette.datastructures import Headers
    return from_headers(Headers(scope=scope), None) or "en"


def _msg(key: str, lang: str, **values: Any) -> str:
    return msg(key, lang, **values)


def _temp_files(folder: str | None) -> set[str]:
    """Gradio's in-progress upload files: ``tmp*`` directly in the upload folder."""
    if not folder:
        return set()
    try:
        return {e.path for e in os.scandir(folder) if e.name.startswith("tmp") and e.is_file(follow_symlinks=False)}
    except OSError:
        return set()


def _paths(body: bytes) -> list[str]:
    try:
        paths = json.loads(body)
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


async def _json(send: Any, status: int, content: dict, headers: list | None = None) -> None:
    data = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def auth_guard_middleware(enabled: bool = True, clock: Callable[[], float] = time.monotonic,
                          roles: dict[str, str] | None = None, uploads: UploadPolicy | None = None) -> Any:
    # start-up: starlette, 0.07 s at import; `studio webui --help` loads this module
    from starlette.middleware import Middleware
    return Middleware(AuthGuard, enabled=enabled, clock=clock, roles=roles, uploads=uploads)
