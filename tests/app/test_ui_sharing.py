"""A studio shared on the network prints addresses teammates can open, offers a logout,
and does not print Gradio's "set share=True in launch()" hint."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from studio.app.addresses import local_ipv4, urls


def test_listening_on_every_interface_lists_this_machines_addresses() -> None:
    shown = urls("0.0.0.0", 7860)
    assert shown[0] == "http://127.0.0.1:7860/"
    assert shown[1:] == [f"http://{a}:7860/" for a in local_ipv4()]
    assert all("0.0.0.0" not in u for u in shown)
    assert urls("127.0.0.1", 80) == ["http://127.0.0.1:80/"]


def test_network_server_prints_lan_addresses_and_has_a_logout(tmp_path: Path) -> None:
    from ui_server import Server
    srv = Server(tmp_path / "ws", "--host", "0.0.0.0", "--auth", "alice:secret").wait_ready()
    try:
        deadline = time.time() + 30
        while "Open the studio at" not in srv.log.read_text() and time.time() < deadline:
            time.sleep(0.2)
        log = srv.log.read_text()
        assert f"http://127.0.0.1:{srv.port}/" in log
        for address in local_ipv4():
            assert f"http://{address}:{srv.port}/" in log
        assert "share=True" not in log and "0.0.0.0" not in log
        with httpx.Client(base_url=srv.url) as client:
            assert client.post("/login", data={"username": "alice", "password": "secret"}).status_code == 200
            config = client.get("/config").json()
        logout = [c for c in config["components"] if c.get("props", {}).get("elem_id") == "logout"]
        assert logout and logout[0]["props"]["link"] == "/logout"
    finally:
        srv.stop()
