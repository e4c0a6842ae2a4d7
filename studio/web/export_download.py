"""The route that sends export downloads to the browser; the links and the zip stream are
studio/app/downloads.py.

The route lives under ``/gradio_api/`` so the login guard (``guard.py``) answers 401 to a caller without a login
before the route runs; the route checks Gradio's own login cookie again (the rule of Gradio 6's ``login_check``:
the ``access-token-<cookie_id>`` or ``access-token-unsecure-<cookie_id>`` cookie must be a live entry of
``app.tokens``), so it stays closed without the guard too. A token of another login session, an unknown token and
a target that left the exports folder all get the same 404.
"""
from __future__ import annotations

from typing import Any, Callable
from urllib.parse import quote

from ..app.downloads import DOWNLOADS, Downloads, login_needed, session_token, stream_zip

ROUTE = "/gradio_api/studio-download"


def make_endpoint(downloads: Downloads | None = None) -> Callable[[Any], Any]:
    # start-up: starlette, 0.07 s at import; `studio webui --help` loads this module
    from starlette.responses import FileResponse, JSONResponse, StreamingResponse

    async def download(request: Any) -> Any:
        owner = None
        if login_needed(request.app):
            owner = session_token(request)
            if owner is None:
                return JSONResponse({"detail": "Not authenticated"}, status_code=401)
        link = (downloads or DOWNLOADS).get(request.path_params.get("token", ""), owner,
                                            request.path_params.get("name", ""))
        if link is None:
            return JSONResponse({"detail": "File not found"}, status_code=404)
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
        if link.path.is_file():
            return FileResponse(link.path, filename=link.name, media_type="application/octet-stream",
                                headers=headers)
        headers["Content-Disposition"] = f"attachment; filename*=utf-8''{quote(link.name)}"
        return StreamingResponse(stream_zip(link.path), media_type="application/zip", headers=headers)

    return download


def route(downloads: Downloads | None = None) -> Any:
    """The download route, for ``launch(app_kwargs={"routes": [...]})`` (a FastAPI argument: the route is
    there from the server's first request, in front of Gradio's own)."""
    # start-up: starlette, 0.07 s at import; `studio webui --help` loads this module
    from starlette.routing import Route
    return Route(ROUTE + "/{token}/{name}", make_endpoint(downloads), methods=["GET"])


def link(token: str, name: str) -> str:
    """The link's address, relative to the page (so it also works under a proxy's path prefix)."""
    return f"{ROUTE.lstrip('/')}/{token}/{quote(name)}"
