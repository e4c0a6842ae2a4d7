"""The inference cache under parallel requests: on a fresh server, 20 playground requests at
once load the model exactly once (no lazy-import race, no copy per request, no model corrupted by another load),
every later request works, and a load that fails leaves nothing behind."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.evaluation import inference

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter (transformers not imported yet), as on a server that just started.
PARALLEL = r"""
import json, sys, threading
from studio.errors import StudioError
from studio.evaluation import inference
assert "transformers" not in sys.modules
loads = []
real = inference.load_model
def counting(path):
    loads.append(threading.get_ident())
    return real(path)
inference.load_model = counting
path = sys.argv[1]
results = [None] * 20
def ask(i):
    try:
        out = list(inference.playground(path, "Is this review positive or negative?", "The lamp is great.",
                                        8, 0.7, 0.9))
        results[i] = "ok" if out and isinstance(out[-1][0], str) else "empty"
    except StudioError as e:
        results[i] = "busy" if e.code in ("eval.busy", "eval.busy_loading") else "studio: " + e.message
    except Exception as e:  # what the issue saw: ImportError, 'probability tensor contains inf/nan'
        results[i] = f"{type(e).__name__}: {e}"
threads = [threading.Thread(target=ask, args=(i,)) for i in range(20)]
go = [t.start() for t in threads]
go = [t.join(240) for t in threads]
after = []
for i in range(10):
    try:
        list(inference.playground(path, "Is this review positive or negative?", "The bag is awful.", 8, 0.7, 0.9))
        after.append("ok")
    except Exception as e:
        after.append(f"{type(e).__name__}: {e}")
print(json.dumps({"parallel": results, "after": after, "loads": len(loads)}))
"""


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from studio.models.loading import build_tiny_llama, demo_texts
    from evalkit import HELDOUT_THINGS, TRAIN_THINGS, easy_rows
    rows = easy_rows(40, 0, TRAIN_THINGS) + easy_rows(10, 1, HELDOUT_THINGS)
    return build_tiny_llama(tmp_path_factory.mktemp("infer") / "base", demo_texts(rows), hidden=32, layers=2,
                            heads=2, vocab_size=400, seed=0)


def test_20_parallel_requests_on_a_fresh_server_load_once_and_all_answer(tiny_model: Path) -> None:
    got = _child(PARALLEL, str(tiny_model))
    assert all(r in ("ok", "busy") for r in got["parallel"]), got["parallel"]
    assert got["parallel"].count("ok") >= 1
    assert got["after"] == ["ok"] * 10, got["after"]
    assert got["loads"] == 1, got


IMPORTS = r"""
import json, threading
from studio.evaluation import inference
errors = []
def go():
    try:
        inference._import_once()
        from transformers import CONFIG_MAPPING, AutoModelForCausalLM  # noqa: F401
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")
threads = [threading.Thread(target=go) for _ in range(20)]
go = [t.start() for t in threads]
go = [t.join(120) for t in threads]
print(json.dumps(errors))
"""

# Eight different models loaded at once: transformers' from_pretrained swaps module-global functions while it
# loads, so overlapping loads (even of different models) can leave them swapped for the whole process.
DIFFERENT_KEYS = r"""
import json, shutil, sys, threading
from pathlib import Path
from studio.evaluation import inference
src, root = Path(sys.argv[1]), Path(sys.argv[2])
paths = [shutil.copytree(src, root / f"m{i}") for i in range(8)]
inference.MAX_CACHED = 8
inference._import_once()
import torch
from transformers import PreTrainedModel
import torch.nn.init as init
before = {n: getattr(init, n) for n in ("normal_", "uniform_", "zeros_", "ones_")}
before.update(init_weights=PreTrainedModel.init_weights, tie_weights=PreTrainedModel.tie_weights)
errors = []
def go(p):
    try:
        m = inference.get_model(p).model
        if not all(torch.isfinite(t).all() for t in m.state_dict().values()):
            errors.append("non-finite weights")
        if m.lm_head.weight.data_ptr() != m.model.embed_tokens.weight.data_ptr():
            errors.append("lm_head not tied")
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")
threads = [threading.Thread(target=go, args=(p,)) for p in paths]
go = [t.start() for t in threads]
go = [t.join(240) for t in threads]
now = {n: getattr(init, n) for n in ("normal_", "uniform_", "zeros_", "ones_")}
now.update(init_weights=PreTrainedModel.init_weights, tie_weights=PreTrainedModel.tie_weights)
print(json.dumps({"errors": errors, "swapped": sorted(n for n in before if before[n] is not now[n])}))
"""


def _child(code: str, *args: str) -> object:
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=400, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_20_threads_importing_at_once_on_a_fresh_interpreter_all_succeed() -> None:
    assert _child(IMPORTS) == []


def test_loads_of_different_models_at_once_leave_transformers_intact(tiny_model: Path, tmp_path: Path) -> None:
    got = _child(DIFFERENT_KEYS, str(tiny_model), str(tmp_path))
    assert got == {"errors": [], "swapped": []}, got


@pytest.fixture()
def fresh_cache(monkeypatch: pytest.MonkeyPatch):
    inference.clear_cache()
    monkeypatch.setattr(inference, "_import_once", lambda: None)  # the fakes below need no transformers
    yield
    inference.clear_cache()


def _fake(path: str) -> inference.Loaded:
    return inference.Loaded(str(path), model=object(), tokenizer=None, cfg=None, template=None)


def test_a_load_that_raises_leaves_nothing_cached_and_the_next_call_retries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    calls: list[str] = []

    def flaky(path: str) -> inference.Loaded:
        calls.append(path)
        if len(calls) == 1:
            raise RuntimeError("interrupted half way")
        return _fake(path)
    monkeypatch.setattr(inference, "load_model", flaky)
    with pytest.raises(RuntimeError, match="interrupted half way"):
        inference.get_model(tmp_path)
    assert not inference._cache
    loaded = inference.get_model(tmp_path)
    assert len(calls) == 2 and inference.get_model(tmp_path) is loaded and len(calls) == 2


def test_one_load_per_key_and_other_keys_are_not_blocked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        fresh_cache: None) -> None:
    slow, other = tmp_path / "slow", tmp_path / "other"
    slow.mkdir()
    other.mkdir()
    release = threading.Event()
    calls: list[str] = []

    def loader(path: str) -> inference.Loaded:
        calls.append(Path(path).name)
        if Path(path).name == "slow":
            release.wait(30)
        return _fake(path)
    monkeypatch.setattr(inference, "load_model", loader)
    ready = inference.get_model(other)  # cached before the slow load starts
    got: list[inference.Loaded] = []
    threads = [threading.Thread(target=lambda: got.append(inference.get_model(slow))) for _ in range(20)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    assert inference.get_model(other) is ready  # a cached model is served while another one loads
    assert time.monotonic() - t0 < 0.2
    release.set()
    for t in threads:
        t.join(10)
    assert calls == ["other", "slow"] and len(got) == 20 and all(g is got[0] for g in got)


def test_a_wait_for_a_load_that_never_ends_is_a_plain_busy_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 fresh_cache: None) -> None:
    release = threading.Event()
    monkeypatch.setattr(inference, "load_model", lambda p: (release.wait(30), _fake(p))[1])
    monkeypatch.setattr(inference, "LOAD_WAIT_S", 0.3)
    first = threading.Thread(target=inference.get_model, args=(tmp_path,))
    first.start()
    time.sleep(0.1)
    with pytest.raises(StudioError) as e:
        inference.get_model(tmp_path)
    assert e.value.code == "eval.busy_loading" and "loading" in e.value.what
    release.set()
    first.join(10)


def test_every_loader_shares_one_reentrant_load_lock() -> None:
    """The process-wide load lock lives with the loaders (models/loading.py) and serves inference, compare and
    quantize alike; reentrant, because a load may nest a load (adapter over base)."""
    import ast
    import inspect
    from studio.evaluation import compare, inference, quantize
    from studio.models import loading
    assert inference._load_lock is loading.LOAD_LOCK
    with loading.LOAD_LOCK:
        assert loading.LOAD_LOCK.acquire(timeout=1)
        loading.LOAD_LOCK.release()
    for module in (loading, compare, quantize):
        tree = ast.parse(inspect.getsource(module))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "from_pretrained" and getattr(n.func.value, "id", "") in
                 ("AutoModelForCausalLM", "PeftModel")]
        guarded = {id(c) for w in ast.walk(tree) if isinstance(w, ast.With)
                   and any("LOAD_LOCK" in ast.unparse(i.context_expr) for i in w.items)
                   for c in ast.walk(w) if isinstance(c, ast.Call)}
        assert calls and all(id(c) in guarded for c in calls), module.__name__
