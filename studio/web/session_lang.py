"""The language of one browser session: the page's labels and every message the server builds for it.

Gradio's ``gr.I18n`` translates static labels in the browser (from ``navigator.language``), but
it cannot translate what the server builds (status lines, reports, errors, plots, run states):
"This feature can only be used to translate static text in the frontend, not values in the
backend" (gradio PR #11047). So both sides read one choice, in this order:

1. the in-page switch (English / 中文): a ``studio_lang`` cookie, set by the page and sent with
   every request of that browser;
2. the server's ``--lang``;
3. the browser's own language (``Accept-Language``);
4. English.

The browser side: ``LangMiddleware`` puts a script first in <head> that makes ``navigator.language``
read the same choice (cookie, then ``--lang``) before Gradio starts and picks its locale.
The server side: Gradio hands each handler its request, and studio/ui/handlers.py turns it into the
language the handler's words are built in (``from_headers``), passed down as a value.
"""
from __future__ import annotations

import json
import re
from typing import Any

LANGS = ("en", "zh")
COOKIE = "studio_lang"
_COOKIE_RE = re.compile(r"(?:^|;\s*)" + COOKIE + r"=(en|zh)(?:;|$)")


def _header(headers: Any, name: str) -> str:
    if headers is None:
        return ""
    try:
        value = headers.get(name) or headers.get(name.title())
    except AttributeError:
        return ""
    return value or ""


def from_accept_language(value: str) -> str | None:
    """'zh-CN,zh;q=0.9,en;q=0.8' -> 'zh'; the first of en/zh by quality; None when neither is listed."""
    best: tuple[float, int, str] | None = None
    for i, part in enumerate(value.split(",")):
        tag, _, params = part.strip().partition(";")
        base = tag.strip().lower().split("-")[0]
        if base not in LANGS:
            continue
        m = re.search(r"q=([0-9.]+)", params)
        try:
            q = float(m.group(1)) if m else 1.0
        except ValueError:
            q = 0.0
        if q > 0 and (best is None or (q, -i) > best[:2]):
            best = (q, -i, base)
    return best[2] if best else None


def from_headers(headers: Any, forced: str | None) -> str | None:
    """The language a request asks for (cookie, then ``forced`` = --lang, then Accept-Language)."""
    m = _COOKIE_RE.search(_header(headers, "cookie"))
    if m:
        return m.group(1)
    if forced in LANGS:
        return forced
    return from_accept_language(_header(headers, "accept-language"))


def head_script(forced: str | None) -> str:
    """<head> script: ``navigator.language`` follows the cookie, else ``forced``, else stays the browser's.

    Gradio picks its locale from navigator.language while the app starts, before launch(head=...)
    is mounted, so this must be in the served HTML itself (see ``LangMiddleware``).
    """
    fallback = f"'{forced}'" if forced in LANGS else "null"
    return ("<script>(function(){try{var m=document.cookie.match(/(?:^|; *)" + COOKIE + "=(en|zh)(?:;|$)/);"
            "var l=m?m[1]:" + fallback + ";if(!l)return;var t=l==='zh'?'zh-CN':'en-US';"
            "Object.defineProperty(navigator,'language',{get:function(){return t}});"
            "Object.defineProperty(navigator,'languages',{get:function(){return [t,l]}});}catch(e){}})();"
            "</script>")


# the in-page switch: remember the choice for this browser, then reload so labels and messages follow it
SWITCH_JS = ("(v) => { document.cookie = '" + COOKIE + "=' + v + '; path=/; max-age=31536000; samesite=lax';"
             " window.location.reload(); return v; }")


class LangMiddleware:
    """ASGI middleware: puts ``head_script(forced)`` first in <head> of every served HTML page.

    Passed to Gradio through launch(app_kwargs={"middleware": [...]}) (a FastAPI argument), so
    it sits inside Gradio's compression and sees the page as plain HTML.
    """

    def __init__(self, app: Any, forced: str | None = None, zh_json: dict[str, str] | None = None):
        self.app = app
        self.forced = forced
        self.script = head_script(forced).encode()
        # server-made words in Gradio's JSON answers (the login page's message: launch(auth_message=) is one
        # string for every browser), replaced for a Chinese session: json-encoded English -> json-encoded Chinese
        self.zh_json = [(json.dumps(en)[1:-1].encode(), json.dumps(zh)[1:-1].encode())
                        for en, zh in (zh_json or {}).items()]

    def _zh(self, scope: dict) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        return from_headers(headers, self.forced) == "zh"

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        start: dict = {}
        body: list[bytes] = []
        zh_json = self.zh_json if self.zh_json and self._zh(scope) else []

        async def capture(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                kind = headers.get(b"content-type", b"")
                if zh_json and kind.startswith(b"application/json"):
                    start["json"] = True
                elif not kind.startswith(b"text/html"):
                    start["pass"] = True
                    await send(message)
                    return
                start["message"] = message
                return
            if start.get("pass"):
                await send(message)
                return
            body.append(message.get("body", b""))
            if not message.get("more_body"):
                html = b"".join(body)
                for en, zh in zh_json:  # the JSON answers, and the config the page itself carries
                    html = html.replace(en, zh)
                if not start.get("json"):
                    html = html.replace(b"<head>", b"<head>" + self.script, 1)
                head = start["message"]
                head["headers"] = [(k, v) for k, v in head.get("headers") or [] if k != b"content-length"] + [
                    (b"content-length", str(len(html)).encode())]
                await send(head)
                await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, capture)


def lang_middleware(forced: str | None, zh_json: dict[str, str] | None = None) -> Any:
    # start-up: starlette, 0.07 s at import; `studio webui --help` loads this module
    from starlette.middleware import Middleware
    return Middleware(LangMiddleware, forced=forced, zh_json=zh_json)
