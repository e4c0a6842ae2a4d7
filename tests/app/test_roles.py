"""Roles on a shared studio: which events are owner actions, and how a login names its role."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.app import server_flags
from studio.ui import app
from studio.app.roles import is_owner_only

# an event whose name says it starts, stops, deletes, renames, exports, converts or uploads a model is an owner action
OWNER_WORDS = re.compile(r"(^|_)(start|abort|resume|delete|remove|rename|export|convert|clear_queue|upload_gguf|queue|download_model|review|make_dataset|promote|rollback)(_|$)")


def _args(*flags: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    server_flags.add_arguments(p)
    return p.parse_args(list(flags))


def test_every_event_named_like_an_owner_action_is_marked(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    blocks = app.build_app(AppContext.create(tmp_path / "ws"))
    named = {f.api_name: f for f in blocks.fns.values() if f.api_name}
    owners = {n for n, f in named.items() if is_owner_only(f.fn)}
    unmarked = sorted(n for n in named if OWNER_WORDS.search(n) and n not in owners)
    assert unmarked == [], f"make these handlers with studio.ui.handlers.owner_action: {unmarked}"
    assert {"start", "abort", "resume", "export_run", "convert", "upload_gguf", "clear_queue", "rename_run",
            "delete_runs", "download_model", "improve", "promote", "rollback"} <= owners
    assert not owners & {"poll", "on_generate", "on_chat", "predict_file", "on_check", "runs_refresh"}


def test_logins_with_roles(tmp_path: Path) -> None:
    f = tmp_path / "logins"
    f.write_text("alice:pw:owner\nbob:pw:with:colons:viewer\ncarol:pw:with:colons\ndave:pw:Viewer\n", encoding="utf-8")
    args = _args("--auth-file", str(f))
    assert server_flags.parse_auth(args) == [("alice", "pw"), ("bob", "pw:with:colons"), ("carol", "pw:with:colons"),
                                    ("dave", "pw")]
    assert server_flags.parse_roles(args) == {"alice": "owner", "bob": "viewer", "carol": "owner", "dave": "viewer"}
    f.write_text("eve::viewer\n", encoding="utf-8")
    with pytest.raises(StudioError, match="USER:PASS:ROLE"):
        server_flags.parse_auth(_args("--auth-file", str(f)))


def test_trusted_proxy_flag() -> None:
    assert _args().trusted_proxy == []
    assert _args("--trusted-proxy", "10.0.0.1", "--trusted-proxy", "10.0.0.2").trusted_proxy == ["10.0.0.1", "10.0.0.2"]
