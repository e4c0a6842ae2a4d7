"""The addresses people can open: `http://0.0.0.0:PORT` means nothing to a teammate.

Listening on 0.0.0.0 (or ::) serves every interface, so we list this machine's own addresses
(every IPv4 address of every interface, loopback first), the ones a colleague on the same
network types into a browser. The studio prints these lines itself and launches Gradio quietly,
so Gradio's "set share=True in launch()" hint (advice for programmers, not for people who start
the studio with --share) is never shown.
"""
from __future__ import annotations

import socket
import subprocess


def local_ipv4() -> list[str]:
    """Every IPv4 address of this machine except loopback, best first (the default route's own first)."""
    found: list[str] = []
    try:  # the address the default route leaves from: no packet is sent by a UDP connect
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
        found += [a for a in out if a.count(".") == 3]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not a.startswith("127.")]


def urls(host: str, port: int) -> list[str]:
    """The URLs to print for a server listening on ``host``."""
    if host in ("0.0.0.0", "::", ""):
        return [f"http://127.0.0.1:{port}/"] + [f"http://{a}:{port}/" for a in local_ipv4()]
    shown = f"[{host}]" if ":" in host else host
    return [f"http://{shown}:{port}/"]
