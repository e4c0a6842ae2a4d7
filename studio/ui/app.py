"""The web studio: assembles the tabs over one AppContext and launches it safely.

``python launch.py`` and ``python -m studio webui`` both come here; their flags and the exposure rule (loopback by
default, a login for anything else) are checked in studio/app/server_flags.py. Typed paths stay inside the
workspace and --data-root, and Gradio serves no folder beyond its own upload cache (allowed_paths is empty).
"""
from __future__ import annotations

import argparse
import functools
import os
from typing import Any

from ..app import improve_page
from ..app.addresses import urls
from ..web.guard import auth_guard_middleware
from ..app.server_flags import check_flags, is_loopback, parse_auth, parse_roles, upload_policy
from ..app.server_flags import add_arguments  # noqa: F401  # this verb's flags (launch.py, studio/__main__.py)
from ..app.uploads import model_upload_mb, server_limit_bytes
from ..web.session_lang import SWITCH_JS


# The studio's own CSS (launch(css=...)); one rule per fix, each saying why.
CSS = """
/* Evaluate chat: Gradio floats the chatbot's toolbar over the top of the message list, so
   the first message (and any message scrolled to the top) sat under it. The list now starts below the toolbar. */
#ev-chat .bubble-wrap { margin-top: 30px; height: calc(100% - 30px); }
/* A viewer's page (page_role.py): the controls of owner-only actions look off and cannot be pressed; the server
   refuses them to a viewer anyway, and an enabled Start beside "Press Start" promised what it would not do. */
body.studio-viewer .owner-action { pointer-events: none; opacity: 0.45; filter: grayscale(1); }
"""


def build_app(ctx: Any) -> Any:
    """The gr.Blocks with every tab; nothing is launched."""
    # start-up: gradio and the tabs, 4.3 s at import; `studio webui --help` never needs them
    import gradio as gr
    from .text import Markdown
    from .data_tab import build_data_tab
    from .i18n import make_i18n
    from .settings_tab import build_settings_tab, wire_settings_page
    from .runs_tab import build_runs_tab
    from .train_tab import build_train_tab
    from .common import CLOSE_TOASTS_JS
    from .handlers import for_each_browser
    T = make_i18n()
    # uploads and other temp files go after a day (Gradio's own sweep; the guard keeps per-login quotas)
    with gr.Blocks(title="Fine-Tune Studio", analytics_enabled=False, delete_cache=(3600, 86400)) as app:
        with gr.Row():
            Markdown(T("app.title"))
            # the page's own language switch: this browser only (a cookie), labels and server messages alike
            lang_pick = gr.Radio([("English", "en"), ("中文", "zh")], value=ctx.lang, show_label=False,
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
                train = build_train_tab(ctx, T, settings.form)
            with gr.Tab(T("tab.evaluate"), id="evaluate", elem_id="tab-evaluate") as eval_tab:
                try:
                    from .evaluate_tab import build_evaluate_tab, relist_runs  # start-up: gradio, as the tabs above
                except ImportError:
                    Markdown(T("eval.placeholder"))
                else:
                    evaluate = build_evaluate_tab(ctx)
                    eval_tab.select(for_each_browser(ctx, relist_runs), [evaluate.run, evaluate.listed],
                                    [evaluate.run, evaluate.listed], api_visibility="private")
            with gr.Tab(T("tab.runs"), id="runs", elem_id="tab-runs") as runs_tab:
                runs = build_runs_tab(ctx, T)
            runs_tab.select(for_each_browser(ctx, runs["refresh"]), runs["picked"], [runs["table"], runs["picked"]],
                            api_visibility="private").then(for_each_browser(ctx, improve_page.versions_markdown),
                                                           None, runs["versions"], api_visibility="private")
            with gr.Tab(T("tab.feedback"), id="feedback", elem_id="tab-feedback") as feedback_tab:
                from .feedback_tab import build_feedback_tab  # start-up: gradio, as the tabs above
                feedback = build_feedback_tab(ctx, T)
            feedback_tab.select(for_each_browser(ctx, feedback["refresh"]), feedback["run"], feedback["run"], api_visibility="private")
        # a toast belongs to the tab it was raised on (common.TOAST_S): picking another tab closes it
        tabs.select(None, None, None, js=CLOSE_TOASTS_JS)
        # a dataset converted on the Data tab becomes the training data; saved settings come back on every load
        wire_settings_page(ctx, app, settings, data["dataset"])
        app.load(for_each_browser(ctx, lambda ctx: train.tick(ctx, None)), None, train.outputs,
                 api_visibility="private")
        app.load(for_each_browser(ctx, lambda ctx: ctx.lang), None, lang_pick, api_visibility="private")  # this browser's
        from .localize import wire  # start-up: gradio, as the tabs above
        wire(app, ctx)  # table headers and choice names the server wrote at build time, in this browser's language
        from .page_role import wire_role  # start-up: gradio, as the tabs above
        wire_role(app, banner, ctx)  # last: it marks the controls of every owner-only event wired above
    app.studio_ctx = ctx  # type: ignore[attr-defined]
    app.studio_i18n = T  # type: ignore[attr-defined]
    return app


def launch_kwargs(args: argparse.Namespace, i18n: Any, auth: list[tuple[str, str]] | None) -> dict[str, Any]:
    """Gradio launch() settings: the exposure, login, language and file-serving rules in one place."""
    from .i18n import lang_middleware, msg  # start-up: gradio, 4.3 s at import; `studio webui --help` never needs it
    from ..web.export_download import route as download_route  # start-up: 0.02 s at import (download tokens, zips), as i18n
    # every page starts in its session's language (in-page switch, --lang, the browser's): studio/web/session_lang.py
    roles = parse_roles(args) if auth else {}
    middleware = [auth_guard_middleware(enabled=bool(auth), roles=roles, uploads=upload_policy(args)),
                  lang_middleware(args.lang)]
    return dict(server_name=args.host, server_port=args.port, share=args.share, auth=auth,
                auth_message=msg("login", "en") if auth else None, i18n=i18n,
                # the export download route (studio/web/export_download.py): a FastAPI argument, so it serves from the
                # first request, behind the same middleware (the login guard) as Gradio's own routes
                app_kwargs={"middleware": middleware, "routes": [download_route()]},
                allowed_paths=[], max_file_size=server_limit_bytes(args.max_upload_mb, model_upload_mb(args)),
                show_error=True,
                css=CSS,
                ssr_mode=False,
                # not Gradio's footer Settings: its language switch changes the labels only, not the
                # server's messages; the page's own English / 中文 switch changes both
                footer_links=["api"], enable_monitoring=False, mcp_server=False,
                quiet=True)  # our own address lines (studio/app/addresses.py), without Gradio's share=True hint


def serving_environment(trusted_proxy: list[str] | None) -> None:
    """The environment a studio server (the page, a demo) runs Gradio and uvicorn in; set before its page is built
    (Gradio's queue reads it when a Blocks is made)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Gradio re-summarises its recorded event timings (a pandas group-by, ~20 ms of CPU) after every event, for a
    # monitoring page the studio does not serve; every open page polls every 2 s, beside a CPU training run
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
    # uvicorn believes X-Forwarded-For from the addresses here (its default: 127.0.0.1), which let anyone on
    # this machine pick the address the login back-off counts; only a proxy named by --trusted-proxy may
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(trusted_proxy or []) or "no-proxy-trusted"


def main(args: argparse.Namespace) -> int:
    """Check exposure, build, serve until interrupted.

    Raises:
        StudioError: unsafe exposure or bad flags (cli.py / launch.py print it, exit 2).
    """
    check_flags(args)
    auth = parse_auth(args)
    serving_environment(getattr(args, "trusted_proxy", []))
    from ..app.context import AppContext  # start-up: 0.06 s at import (yaml); `studio webui --help` never needs it
    ctx = AppContext.create(args.workspace, data_roots=args.data_root, lang=args.lang or "en",
                            max_upload_mb=args.max_upload_mb,
                            max_model_upload_mb=model_upload_mb(args),
                            nvme_roots=getattr(args, "nvme_root", []))
    ctx.forced_lang = args.lang  # None: each browser's own language
    ctx.extra["auth"] = bool(auth)
    ctx.extra["roles"] = parse_roles(args) if auth else {}  # the page says "viewer" and switches owner controls off
    ctx.extra["launch"] = args  # the Share-a-demo panel (app/shared_demos.py) starts a run's demo with these host and logins
    ctx.extra["network"] = not is_loopback(args.host)
    ctx.allow_remote_code = bool(getattr(args, "trust_remote_code", False))
    # built-in models are prepared once per user into zoo.cache_dir() (STUDIO_MODEL_CACHE moves it)
    app = build_app(ctx)
    # start-up: 0.06-0.09 s at import (yaml, the job runner); `studio webui --help` never needs them
    from ..runs import queue as run_queue
    from ..app.paths import resolve_run_paths
    run_queue.watch(ctx, functools.partial(resolve_run_paths, ctx=ctx))  # queued runs (kept in the workspace) start by themselves
    app.queue(default_concurrency_limit=4)
    print(f"Workspace: {ctx.workspace}", flush=True)
    app.launch(**launch_kwargs(args, app.studio_i18n, auth), prevent_thread_lock=True)
    port = getattr(app, "server_port", None) or args.port
    lines = urls(args.host, port) + ([app.share_url] if getattr(app, "share_url", None) else [])
    print("Open the studio at:\n" + "\n".join(f"  {u}" for u in lines), flush=True)
    app.block_thread()
    return 0
