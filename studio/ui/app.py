"""The web studio: assembles the tabs over one AppContext and launches it safely.

``python launch.py`` and ``python -m studio webui`` both come here. Exposure rules: loopback by
default; a public share link or a non-loopback host needs a password (Gradio's login) unless the
person explicitly passes --no-auth. Typed paths stay inside the workspace and --data-root, and
Gradio serves no folder beyond its own upload cache (allowed_paths is empty).
"""
from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import math
import os
import socket
import sys
from pathlib import Path
from typing import Any

from ..errors import StudioError
from .guard import auth_guard_middleware
from ..app.upload_quota import DEFAULT_QUOTA_MB, DEFAULT_VIEWER_QUOTA_MB, UploadPolicy
from ..app.uploads import DATA_MB, MODEL_MB, model_upload_mb, server_limit_bytes

from ..app.roles import ROLES

AUTH_ENV = "STUDIO_AUTH"  # USER:PASS from the environment: unlike --auth, not visible in the process list

log = logging.getLogger("studio.ui")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    p.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    p.add_argument("--share", action="store_true", help="create a public gradio.live link (needs --auth)")
    p.add_argument("--auth", metavar="USER:PASS", help="require this login (visible in the process list: prefer "
                   f"--auth-file or the {AUTH_ENV} environment variable)")
    p.add_argument("--auth-file", metavar="FILE", help="require a login from FILE (one USER:PASS or USER:PASS:ROLE "
                   "per line; ROLE is owner (the default: everything) or viewer (results, playground, chat, "
                   "batch prediction; no starting, aborting, exporting or uploading models))")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="the address of a reverse proxy in front of the studio (repeatable); only from it is "
                        "X-Forwarded-For believed, e.g. for the failed-login back-off")
    p.add_argument("--no-auth", action="store_true", help="allow --share / a network host without a login")
    p.add_argument("--lang", choices=["en", "zh"], default=None, help="default UI language (default: the browser's)")
    p.add_argument("--max-upload-mb", type=float, default=DATA_MB,
                   help=f"largest accepted data or settings upload in MB (default {DATA_MB:g})")
    p.add_argument("--max-model-upload-mb", type=float, default=MODEL_MB,
                   help=f"largest accepted .gguf model upload in MB (default {MODEL_MB:g})")
    p.add_argument("--upload-quota-mb", type=float, default=DEFAULT_QUOTA_MB,
                   help=f"uploads one owner login keeps on disk at once, oldest removed first (default "
                        f"{DEFAULT_QUOTA_MB:g}); uploads are removed after a day")
    p.add_argument("--viewer-upload-quota-mb", type=float, default=DEFAULT_VIEWER_QUOTA_MB,
                   help=f"the same for a viewer login (default {DEFAULT_VIEWER_QUOTA_MB:g}); a viewer may upload "
                        "data files to predict only, each within the spreadsheet limit")
    p.add_argument("--data-root", action="append", default=[], metavar="DIR",
                   help="an extra folder the studio may read data/models from (repeatable)")
    p.add_argument("--nvme-root", action="append", default=[], metavar="DIR",
                   help="a folder on a fast local disk the page may name as offload_nvme_path for DeepSpeed "
                        "z3-nvme (repeatable; without it the page cannot use z3-nvme, the command line can)")
    p.add_argument("--workspace", default="workspace", help="the studio's folder for data, runs and settings")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="allow runs with trust_remote_code (the model's own Python code runs on this server); "
                        "only this flag can allow it, never the web page")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_auth(args: argparse.Namespace) -> list[tuple[str, str]] | None:
    """(user, password) pairs for Gradio, from ``parse_logins``."""
    logins = parse_logins(args)
    return [(u, pw) for u, pw, _ in logins] if logins else None


def parse_roles(args: argparse.Namespace) -> dict[str, str]:
    """user -> role ('owner' | 'viewer'), from the same logins."""
    return {u: role for u, _, role in parse_logins(args, quiet=True) or []}


def _split_login(pair: str) -> tuple[str, str, str]:
    """USER:PASS[:ROLE]; a password may hold colons, so only a last part that names a role is one."""
    user, sep, rest = pair.partition(":")
    password, role = rest, "owner"
    head, _, last = rest.rpartition(":")
    if ":" in rest and last.strip().lower() in ROLES:
        password, role = head, last.strip().lower()
    if not sep or not user.strip() or not password:
        raise StudioError("A login must look like USER:PASS or USER:PASS:ROLE",
                          "write it as --auth alice:secret (or one USER:PASS[:owner|viewer] per line in the auth file)",
                          code="auth")
    return user.strip(), password, role


def parse_logins(args: argparse.Namespace, quiet: bool = False) -> list[tuple[str, str, str]] | None:
    """Logins (user, password, role) from --auth / --auth-file / the environment, after the exposure check.

    Raises:
        StudioError: conflicting flags, a malformed login, a missing auth file, or an exposed
            server without a login and without --no-auth.
    """
    pairs: list[str] = []
    if args.auth and not quiet:
        print("Warning: --auth shows the password in the process list (ps) to everyone on this machine; use "
              f"--auth-file FILE or the {AUTH_ENV} environment variable instead", file=sys.stderr)
    if args.auth:
        pairs.append(args.auth)
    env_auth = os.environ.get(AUTH_ENV, "").strip()
    if env_auth and not args.auth and not args.auth_file:
        pairs.append(env_auth)
    if args.auth_file:
        path = Path(args.auth_file)
        if not path.is_file():
            raise StudioError(f"Auth file '{path}' does not exist", "create it with one USER:PASS per line",
                              code="auth")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:  # the operator's file: refused, never moved or rewritten
            raise StudioError(f"Auth file '{path}' cannot be read ({getattr(exc, 'reason', None) or exc})",
                              "save it as UTF-8 text with one USER:PASS or USER:PASS:ROLE per line, readable by "
                              "the user who starts the studio", code="auth") from None
        pairs += [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    logins = [_split_login(pair) for pair in pairs]
    if (args.auth or args.auth_file or env_auth) and not logins:
        raise StudioError(f"Auth file '{args.auth_file}' has no logins", "add one USER:PASS per line", code="auth")
    if logins and args.no_auth:
        raise StudioError("--no-auth contradicts --auth/--auth-file", "pass one or the other", code="auth")
    exposed = args.share or not is_loopback(args.host)
    if exposed and not logins and not args.no_auth:
        where = "a public --share link" if args.share else f"--host {args.host} (reachable from other machines)"
        raise StudioError(f"Refusing to start without a password on {where}",
                          "add --auth USER:PASS or --auth-file FILE; or pass --no-auth if everyone who can reach it "
                          "may use this machine's GPU, files and models",
                          why="Anyone who can open the page could train, read the workspace and run models",
                          code="auth")
    return logins or None


def check_flags(args: argparse.Namespace) -> None:
    """The numeric flags and the port, checked before anything is built.

    Raises:
        StudioError: --max-upload-mb not a positive finite number, a port out of range or already in use.
    """
    for flag, value, example in (("--max-upload-mb", args.max_upload_mb, DATA_MB),
                                 ("--max-model-upload-mb", model_upload_mb(args), MODEL_MB),
                                 ("--upload-quota-mb", getattr(args, "upload_quota_mb", 1.0), DEFAULT_QUOTA_MB),
                                 ("--viewer-upload-quota-mb", getattr(args, "viewer_upload_quota_mb", 1.0),
                                  DEFAULT_VIEWER_QUOTA_MB)):
        if not (math.isfinite(value) and value > 0):
            raise StudioError(f"{flag} must be a number above 0 (got {value:g})", f"use e.g. {flag} {example:g}",
                              code="args")
    if not 1 <= args.port <= 65535:
        raise StudioError(f"--port must be between 1 and 65535 (got {args.port})", "use e.g. --port 7860",
                          code="args")
    try:
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((args.host, args.port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise StudioError(f"Port {args.port} on {args.host} is already in use",
                              "stop the other program (or studio) using it, or pick another port with --port",
                              code="args") from None
        raise StudioError(f"Cannot listen on {args.host}:{args.port} ({exc.strerror})",
                          "check --host (an address of this machine) and --port", code="args") from None


def build_app(ctx: Any) -> Any:
    """The gr.Blocks with every tab; nothing is launched."""
    import gradio as gr
    from .text import Markdown
    from .data_tab import build_data_tab
    from .i18n import make_i18n
    from .settings_tab import build_settings_tab
    from .runs_tab import build_runs_tab
    from .train_tab import build_train_tab
    from .session_lang import SWITCH_JS, session_lang, session_user
    from .common import CLOSE_TOASTS_JS
    ctx.lang_source, ctx.user_source = session_lang, session_user  # the services ask the page who is asking
    T = make_i18n()
    # uploads and other temp files go after a day (Gradio's own sweep; the guard keeps per-login quotas)
    with gr.Blocks(title="Fine-Tune Studio", analytics_enabled=False, delete_cache=(3600, 86400)) as app:
        with gr.Row():
            Markdown(T("app.title"))
            # the page's own language switch: this browser only (a cookie), labels and server messages alike
            lang_pick = gr.Radio([("English", "en"), ("中文", "zh")], value=ctx.default_lang, show_label=False,
                                 container=False, scale=0, min_width=160, elem_id="lang-switch")
            lang_pick.input(None, lang_pick, None, js=SWITCH_JS)
            if ctx.extra.get("auth"):  # Gradio's own /logout route ends the login session
                gr.Button(T("app.logout"), link="/logout", size="sm", scale=0, elem_id="logout")
        banner = Markdown(visible=False, elem_id="role-banner")  # a viewer's page says so (page_role.py)
        Markdown(T("app.intro"))
        with gr.Tabs() as tabs:
            with gr.Tab(T("tab.data"), id="data", elem_id="tab-data"):
                data = build_data_tab(ctx, T)
            with gr.Tab(T("tab.settings"), id="settings", elem_id="tab-settings"):
                settings = build_settings_tab(ctx, T)
            with gr.Tab(T("tab.train"), id="train", elem_id="tab-train"):
                train = build_train_tab(ctx, T, settings["form"])
            with gr.Tab(T("tab.evaluate"), id="evaluate", elem_id="tab-evaluate") as eval_tab:
                try:
                    from .evaluate_tab import build_evaluate_tab
                except ImportError:
                    Markdown(T("eval.placeholder"))
                else:
                    evaluate = build_evaluate_tab(ctx)
                    if isinstance(evaluate, dict) and "refresh_runs" in evaluate and "run" in evaluate:
                        eval_tab.select(evaluate["refresh_runs"], [evaluate["run"], evaluate["listed"]],
                                        [evaluate["run"], evaluate["listed"]],
                                        api_visibility="private")
            with gr.Tab(T("tab.runs"), id="runs", elem_id="tab-runs") as runs_tab:
                runs = build_runs_tab(ctx, T)
            runs_tab.select(runs["refresh"], runs["picked"], [runs["table"], runs["picked"]],
                            api_visibility="private")
        # a toast belongs to the tab it was raised on (common.TOAST_S): picking another tab closes it
        tabs.select(None, None, None, js=CLOSE_TOASTS_JS)
        form = settings["form"]
        comps = list(form.values())
        derive_in, derive_out = settings["short"] + comps, comps + [settings["why"]]
        # a dataset converted on the Data tab becomes the training data; the settings are derived for it
        data["dataset"].change(settings["pick_dataset"], data["dataset"], [settings["data_pick"], settings["task"]],
                               api_visibility="private").then(
            lambda *a: settings["on_short"](*a) if a[3] else [gr.skip()] * len(derive_out), derive_in, derive_out,
            api_visibility="private")
        # the settings saved for this workspace come back on every page load; then the panels are checked
        app.load(settings["on_load"], None, settings["load_outputs"], api_visibility="private").then(
            settings["refresh"], comps + [settings["gpu_mem"], settings["host_ram"]], [settings["fit"], settings["check"]],
            api_visibility="private")
        app.load(lambda: train["tick"](None), None, train["outputs"], api_visibility="private")
        app.load(lambda: ctx.lang, None, lang_pick, api_visibility="private")  # this browser's language
        from .localize import wire
        wire(app, ctx)  # table headers and choice names the server wrote at build time, in this browser's language
        from .page_role import wire_role
        wire_role(app, banner, ctx.lang)  # last: it marks the controls of every owner-only event wired above
    app.studio_ctx = ctx  # type: ignore[attr-defined]
    app.studio_i18n = T  # type: ignore[attr-defined]
    return app


def upload_policy(args: argparse.Namespace) -> UploadPolicy:
    """Per-role upload sizes and per-login quotas (upload_quota.py) from the flags. A viewer uploads files to predict:
    at most the spreadsheet limit of a batch file, whatever --max-upload-mb allows owners' data."""
    from ..evaluation.limits import MAX_BATCH_MB
    data = float(args.max_upload_mb)
    return UploadPolicy(data_mb=min(data, MAX_BATCH_MB), model_mb=max(data, model_upload_mb(args)),
                        quota_mb=float(getattr(args, "upload_quota_mb", DEFAULT_QUOTA_MB)),
                        viewer_quota_mb=float(getattr(args, "viewer_upload_quota_mb", DEFAULT_VIEWER_QUOTA_MB)))


def launch_kwargs(args: argparse.Namespace, i18n: Any, auth: list[tuple[str, str]] | None) -> dict[str, Any]:
    """Gradio launch() settings: the exposure, login, language and file-serving rules in one place."""
    from .i18n import lang_middleware, msg
    from .styles import CSS as STUDIO_CSS
    from .export_download import route as download_route
    # every page starts in its session's language (in-page switch, --lang, the browser's): session_lang.py
    roles = parse_roles(args) if auth else {}
    middleware = [auth_guard_middleware(enabled=bool(auth), roles=roles, uploads=upload_policy(args)),
                  lang_middleware(args.lang)]
    return dict(server_name=args.host, server_port=args.port, share=args.share, auth=auth,
                auth_message=msg("login", "en") if auth else None, i18n=i18n,
                # the export download route (export_download.py): a FastAPI argument, so it serves from the
                # first request, behind the same middleware (the login guard) as Gradio's own routes
                app_kwargs={"middleware": middleware, "routes": [download_route()]},
                allowed_paths=[], max_file_size=server_limit_bytes(args.max_upload_mb, model_upload_mb(args)),
                show_error=True,
                css=STUDIO_CSS,
                ssr_mode=False,
                # not Gradio's footer Settings: its language switch changes the labels only, not the
                # server's messages; the page's own English / 中文 switch changes both
                footer_links=["api"], enable_monitoring=False, mcp_server=False,
                quiet=True)  # our own address lines (studio/app/addresses.py), without Gradio's share=True hint


def main(args: argparse.Namespace) -> int:
    """Check exposure, build, serve until interrupted.

    Raises:
        StudioError: unsafe exposure or bad flags (cli.py / launch.py print it, exit 2).
    """
    check_flags(args)
    auth = parse_auth(args)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # uvicorn believes X-Forwarded-For from the addresses here (its default: 127.0.0.1), which let anyone on
    # this machine pick the address the login back-off counts; only a proxy named by --trusted-proxy may
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(getattr(args, "trusted_proxy", []) or []) or "no-proxy-trusted"
    from ..app.context import AppContext
    ctx = AppContext.create(args.workspace, data_roots=args.data_root, lang=args.lang or "en",
                            max_upload_mb=args.max_upload_mb,
                            max_model_upload_mb=model_upload_mb(args),
                            nvme_roots=getattr(args, "nvme_root", []))
    ctx.extra["auth"] = bool(auth)
    ctx.extra["roles"] = parse_roles(args) if auth else {}  # the page says "viewer" and switches owner controls off
    ctx.extra["launch"] = args  # the Share-a-demo panel (share_demo.py) starts a run's demo with these host and logins
    ctx.extra["network"] = not is_loopback(args.host)
    ctx.allow_remote_code = bool(getattr(args, "trust_remote_code", False))
    # built-in models are prepared once per user into zoo.cache_dir() (STUDIO_MODEL_CACHE moves it)
    app = build_app(ctx)
    from ..runs import queue as run_queue
    from ..app.paths import resolve_run_paths
    run_queue.watch(ctx, lambda c: resolve_run_paths(c, ctx))  # queued runs (kept in the workspace) start by themselves
    app.studio_forced_lang = args.lang  # type: ignore[attr-defined]  # None: each browser's own language
    app.queue(default_concurrency_limit=4)
    print(f"Workspace: {ctx.workspace}", flush=True)
    app.launch(**launch_kwargs(args, app.studio_i18n, auth), prevent_thread_lock=True)
    from ..app.addresses import urls
    port = getattr(app, "server_port", None) or args.port
    lines = urls(args.host, port) + ([app.share_url] if getattr(app, "share_url", None) else [])
    print("Open the studio at:\n" + "\n".join(f"  {u}" for u in lines), flush=True)
    app.block_thread()
    return 0
