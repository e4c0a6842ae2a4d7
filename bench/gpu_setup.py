"""bench/gpu_check.sh's setup check: what the run needs is importable, in the versions it needs, from where it should
come. python bench/gpu_setup.py --site DIR --json versions.json [--dry-run]

Exit 1 with every reason when something is wrong: the check stops there instead of running sections that would all
fail (the card's own transformers lacks the API the studio calls, so every studio arm failed on an earlier visit).
On a card: a CUDA/ROCm device answers; transformers is the version requirements.txt pins and comes from the carried
wheels (``--site``); bitsandbytes and liger-kernel import. On the CPU dry run the card and Liger (Triton, GPU only)
are not asked for. ``words()`` names the software in a sentence for the summary.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CARRIED = ("transformers", "bitsandbytes", "liger_kernel")   # bench/gpu_wheels.sh's wheels
OWN = ("peft", "accelerate", "deepspeed", "flash_attn", "pytest")
NAMES = {"liger_kernel": "liger-kernel", "flash_attn": "flash-attn", "deepspeed": "DeepSpeed"}


def pinned(name: str) -> str | None:
    """The version requirements.txt pins for ``name`` (what users install)."""
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(rf"^{re.escape(name)}==([\w.]+)", line.strip())
        if found:
            return found.group(1)
    return None


def _version(name: str, mod: Any) -> str:
    """The installed distribution's version (liger-kernel has no ``__version__``), found first on the path as the
    module itself was, so a carried package reports its own."""
    try:
        return importlib.metadata.version(NAMES.get(name, name).lower())
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(mod, "__version__", "?"))


def facts(site: str) -> dict[str, Any]:
    """torch and its device, then each package: version and whether it came from the carried ``site``."""
    import torch
    out: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip",
                           None), "card": None, "card_gib": None, "packages": {}}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        out["card"], out["card_gib"] = props.name, round(props.total_memory / 2**30, 1)
    for name in CARRIED + OWN:
        if name in OWN:   # the machine's own: its version is enough (importing DeepSpeed alone takes seconds)
            try:
                out["packages"][name] = {"version": importlib.metadata.version(NAMES.get(name, name).lower()),
                                         "carried": False}
            except importlib.metadata.PackageNotFoundError:
                out["packages"][name] = {"error": "not installed"}
            continue
        try:
            mod = importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a missing or broken package is a fact to report
            out["packages"][name] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
            continue
        where = str(getattr(mod, "__file__", "") or "")
        out["packages"][name] = {"version": _version(name, mod), "carried": bool(site) and where.startswith(site)}
    return out


def problems(f: dict[str, Any], dry: bool) -> list[str]:
    """Every reason the run cannot give its numbers here."""
    out = []
    pkgs = f["packages"]
    if not dry and not f["card"]:
        out.append("no CUDA/ROCm card answers (torch.cuda.is_available() is False)")
    want = pinned("transformers")
    got = pkgs["transformers"].get("version")
    if got != want:
        out.append(f"transformers is {got or pkgs['transformers'].get('error')}, the studio pins {want}")
    elif not dry and not pkgs["transformers"]["carried"]:
        out.append("transformers does not come from the carried wheels")
    if "error" in pkgs["bitsandbytes"]:
        out.append("bitsandbytes does not import: " + pkgs["bitsandbytes"]["error"])
    if not dry and "error" in pkgs["liger_kernel"]:
        out.append("liger-kernel does not import: " + pkgs["liger_kernel"]["error"])
    return out


def words(f: dict[str, Any]) -> str:
    """The software in one sentence: the card's own torch, what was carried, the card's own rest, what is missing."""
    backend = f"ROCm/HIP {f['hip']}" if f.get("hip") else f"CUDA {f['cuda']}" if f.get("cuda") else "CPU build"
    where = f"on {f['card']} ({f['card_gib']} GiB)" if f.get("card") else "on no card (CPU)"
    pkgs = f["packages"]

    def named(keys: list[str]) -> str:
        return ", ".join(f"{NAMES.get(k, k)} {pkgs[k]['version']}" for k in keys) or "none"
    carried = [k for k, v in pkgs.items() if v.get("carried")]
    own = [k for k, v in pkgs.items() if "version" in v and not v.get("carried")]
    missing = [NAMES.get(k, k) for k, v in pkgs.items() if "error" in v]
    return (f"torch {f['torch']} ({backend}) {where}; carried with the checkout: {named(carried)}; "
            f"the machine's own: {named(own)}; not installed: {', '.join(missing) or 'nothing'}.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", default="", help="where the carried wheels were installed")
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    f = facts(a.site)
    f["words"] = words(f)
    f["problems"] = problems(f, a.dry_run)
    a.json.write_text(json.dumps(f, indent=1), encoding="utf-8")
    print(f["words"])
    for p in f["problems"]:
        print("SETUP PROBLEM: " + p)
    return 1 if f["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
