"""The web server's flags, checked before anything is built: host and port, logins and roles, upload limits.

``python launch.py``, ``python -m studio webui`` and ``python -m studio demo`` share them (studio/ui/app.py and
studio/ui/demo.py serve the pages). Exposure rule: loopback by default; a public share link or a non-loopback host
needs a login unless the person explicitly passes --no-auth. No web framework here: plain argparse and sockets.
"""
from __future__ import annotations

import argparse
import errno
import ipaddress
import math
import os
import socket
import sys
from pathlib import Path

from ..errors import StudioError
from ..evaluation.limits import MAX_BATCH_MB
from .roles import ROLES
from .upload_quota import DEFAULT_QUOTA_MB, DEFAULT_VIEWER_QUOTA_MB, UploadPolicy
from .uploads import DATA_MB, MODEL_MB, model_upload_mb

DEMO_PORT = 7861  # the studio's is 7860: both can run side by side
AUTH_ENV = "STUDIO_AUTH"  # USER:PASS from the environment: unlike --auth, not visible in the process list

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
        raise StudioError.of("server.login_shape")
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
            raise StudioError.of("server.auth_file_missing", path=path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:  # the operator's file: refused, never moved or rewritten
            raise StudioError.of("server.auth_file_unreadable", path=path,
                                 detail=str(getattr(exc, "reason", None) or exc)) from None
        pairs += [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    logins = [_split_login(pair) for pair in pairs]
    if (args.auth or args.auth_file or env_auth) and not logins:
        raise StudioError.of("server.auth_file_empty", path=str(args.auth_file))
    if logins and args.no_auth:
        raise StudioError.of("server.auth_conflict", flag="--no-auth", others="--auth/--auth-file")
    exposed = args.share or not is_loopback(args.host)
    if exposed and not logins and not args.no_auth:
        if args.share:
            raise StudioError.of("server.no_password_share", flag="--share")
        raise StudioError.of("server.no_password_host", flag="--host", host=args.host)
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
            raise StudioError.of("server.flag_not_positive", flag=flag, value=value, example=example)
    if not 1 <= args.port <= 65535:
        raise StudioError.of("server.port_range", flag="--port", port=args.port)
    try:
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((args.host, args.port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise StudioError.of("server.port_in_use", port=args.port, host=args.host) from None
        raise StudioError.of("server.cannot_listen", host=args.host, port=args.port, detail=str(exc.strerror)) from None


def upload_policy(args: argparse.Namespace) -> UploadPolicy:
    """Per-role upload sizes and per-login quotas (upload_quota.py) from the flags. A viewer uploads files to predict:
    at most the spreadsheet limit of a batch file, whatever --max-upload-mb allows owners' data."""
    data = float(args.max_upload_mb)
    return UploadPolicy(data_mb=min(data, MAX_BATCH_MB), model_mb=max(data, model_upload_mb(args)),
                        quota_mb=float(getattr(args, "upload_quota_mb", DEFAULT_QUOTA_MB)),
                        viewer_quota_mb=float(getattr(args, "viewer_upload_quota_mb", DEFAULT_VIEWER_QUOTA_MB)))


def add_demo_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``python -m studio demo RUN``: the studio's host, login and upload flags, and the run."""
    p.add_argument("run", help="a finished run: its folder name in WORKSPACE/runs (or a path to it)")
    p.add_argument("--workspace", default="workspace", help="the studio's folder whose runs/ holds RUN")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only; "
                   "0.0.0.0 for teammates on the network, which needs a login)")
    p.add_argument("--port", type=int, default=DEMO_PORT, help=f"port (default {DEMO_PORT})")
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


def check_demo_flags(args: argparse.Namespace) -> tuple[object, list[tuple[str, str]] | None]:
    """The flag, login and run checks, before anything is loaded: (the run folder, the logins).

    Raises:
        StudioError: a bad flag or port, an exposed host without a login, a run outside WORKSPACE/runs,
            not a run, or not finished.
    """
    args.share = False  # no public gradio.live link for a demo
    args.max_model_upload_mb = args.max_upload_mb  # no model uploads here: Gradio's one limit is the data limit
    check_flags(args)
    auth = parse_auth(args)
    workspace = Path(args.workspace).expanduser().resolve()
    from ..runs.run_dir import find_finished_run  # start-up: 0.011 s at import; `studio webui --help` loads us
    return find_finished_run(workspace / "runs", args.run), auth
