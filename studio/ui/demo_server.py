"""python -m studio demo RUN [--host --port --auth USER:PASS | --auth-file FILE --lang en|zh]

A page with one finished run's model for teammates (studio/ui/demo.py). It is served exactly as the studio is:
the same flag checks, logins and exposure rule (a network host needs a login; studio/app/server_flags.py) and the
same login guard in front of every route (studio/ui/app.py: ``launch_kwargs``). It reads the run and its base
model and writes into the workspace only teammates' feedback (WORKSPACE/feedback.sqlite3, shared with the
studio); the model is loaded once, before the address is printed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..app.server_flags import AUTH_ENV
from ..app.uploads import DATA_MB

DEFAULT_PORT = 7861  # the studio's is 7860: both can run side by side


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="a finished run: its folder name in WORKSPACE/runs (or a path to it)")
    p.add_argument("--workspace", default="workspace", help="the studio's folder whose runs/ holds RUN")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only; "
                   "0.0.0.0 for teammates on the network, which needs a login)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--auth", metavar="USER:PASS", help="require this login (visible in the process list: prefer "
                   f"--auth-file or the {AUTH_ENV} environment variable)")
    p.add_argument("--auth-file", metavar="FILE", help="require a login from FILE (one USER:PASS[:ROLE] per line, "
                   "the studio's own login file works as is)")
    p.add_argument("--no-auth", action="store_true", help="allow a network host without a login")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="the address of a reverse proxy in front of the demo (repeatable)")
    p.add_argument("--lang", choices=["en", "zh"], default=None, help="page language (default: the browser's)")
    p.add_argument("--max-upload-mb", type=float, default=DATA_MB,
                   help=f"largest file accepted for batch prediction in MB (default {DATA_MB:g})")


def prepare(args: argparse.Namespace) -> tuple[object, list[tuple[str, str]] | None]:
    """The flag, login and run checks, before anything is loaded: (the run folder, the logins).

    Raises:
        StudioError: a bad flag or port, an exposed host without a login, a run outside WORKSPACE/runs,
            not a run, or not finished.
    """
    from ..runs.run_dir import find_finished_run
    from ..app.server_flags import check_flags, parse_auth
    args.share = False  # no public gradio.live link for a demo
    args.max_model_upload_mb = args.max_upload_mb  # no model uploads here: Gradio's one limit is the data limit
    check_flags(args)
    auth = parse_auth(args)
    workspace = Path(args.workspace).expanduser().resolve()
    return find_finished_run(workspace / "runs", args.run), auth


def main(args: argparse.Namespace) -> int:
    """Check, load the model, serve until interrupted.

    Raises:
        StudioError: see ``prepare``; a model that cannot be loaded.
    """
    started = time.perf_counter()
    run, auth = prepare(args)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # as the studio does (app.py): X-Forwarded-For is believed only from a proxy named by --trusted-proxy
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(args.trusted_proxy or []) or "no-proxy-trusted"
    # built-in base models come from the per-user model cache the studio prepared them into (zoo.cache_dir)
    from ..evaluation import inference
    from ..app.addresses import urls
    from ..app.server_flags import is_loopback
    from .app import launch_kwargs
    from .demo import build_demo, describe_run
    from .i18n import make_i18n
    print(f"Loading the model of run '{run.path.name}'…", flush=True)  # type: ignore[attr-defined]
    info = describe_run(run.path)  # type: ignore[attr-defined]
    inference.get_model(info.path)  # once, here: every visitor shares this copy (inference's cache)
    from ..feedback.store import FeedbackStore
    store = FeedbackStore.in_workspace(Path(args.workspace).expanduser().resolve())
    app = build_demo(info, args.lang, args.max_upload_mb, auth=bool(auth), store=store)
    app.studio_forced_lang = args.lang  # type: ignore[attr-defined]
    app.queue(default_concurrency_limit=4)
    app.launch(**launch_kwargs(args, make_i18n(), auth), prevent_thread_lock=True)
    port = getattr(app, "server_port", None) or args.port
    print(f"Demo of '{info.name}' ({info.task}) ready in {time.perf_counter() - started:.1f} s. Open it at:\n"
          + "\n".join(f"  {u}" for u in urls(args.host, port)), flush=True)
    if not auth and is_loopback(args.host):
        print("No login: only people on this machine can open it (use --host 0.0.0.0 --auth-file FILE to share it).",
              file=sys.stderr, flush=True)
    app.block_thread()
    return 0
