"""Mutation check for the code that exists for a card or for a fault (layer-wise offload, OOM recovery).

    python bench/mutants.py            # every mutant; exit 1 if one survives (or the unmutated tests are red)
    python bench/mutants.py --list     # names and the tests that guard each
    python bench/mutants.py NAME ...   # only these

A passing test of offload or OOM recovery is evidence only if breaking the code makes it fail (docs: DESIGN.md,
"Mutants"). Each mutant is one named source edit. The repository is copied once into a temporary folder
(studio/, tests/, presets/, pytest.ini: the files under test are never edited where they live, since others may be
running them); each edit is applied there on its own, the tests that guard it run with ``-x`` (the first failure is
enough), and the file is restored before the next. Each pytest is a fork of this process, which imported torch,
transformers, peft and accelerate once (never a studio module), so a mutant costs its test, not a fresh interpreter's
imports (those were most of the old run: 20 mutants took 292 s at load 6 as subprocesses, 51 s forked at load 4-6;
``--no-fork``: a fresh ``python -m pytest`` each). The unmutated copy runs the same tests first: a red baseline
would make every mutant look caught. An edit whose text is no longer in the source is an error, not a pass.
tests/bench/test_mutants.py runs this in CI.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPY = ["studio", "tests", "presets", "pytest.ini"]
OFFLOAD = "studio/engine/offload.py"
TRAINER = "studio/engine/studio_trainer.py"
_EXACT = "tests/engine/test_offload.py::test_offloaded_forward_backward_is_exact_and_keeps_k_layers"
_GRADS_HOME = ("tests/engine/test_offload.py::"
               "test_gradients_go_home_pinned_and_batched_per_layer_then_a_fused_adamw_steps_on_the_host")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str


MUTANTS = [
    Mutant("recover_from_oom_noop", TRAINER,
           "            offloader.send_all_home()\n", "            pass\n",
           ("tests/engine/test_oom.py::"
            "test_a_full_card_runs_out_of_memory_loading_a_layer_and_recovery_gives_it_back",),
           "StudioTrainer._recover_from_oom does nothing"),
    # The second mutant removed the per-submodule forward pre-hooks: it survived every offload and OOM
    # test on transformers 5.17 and 5.24, since they never changed a placement (the layer's backward pre-hook has
    # loaded the layer before any recompute), so they were deleted as dead code; see offload.py's docstring.
    Mutant("prefetch_branch_raises", OFFLOAD,
           "        if side_stream:\n", "        if side_stream:\n            raise RuntimeError('mutant')\n",
           (f"{_EXACT}[ckpt-full-prefetch]",),
           "the side-stream (CUDA prefetch) branch of _load raises"),
    Mutant("no_host_grad_accumulation", OFFLOAD,
           "p.grad = view if fresh else (held.add_(view) if held is not None else view.clone())",
           "p.grad = view if fresh else view.clone()",
           (f"{_EXACT}[ckpt-full-sync]",),
           "a layer's card gradient replaces the host gradient instead of adding to it"),
    Mutant("no_end_of_backward_send_home", OFFLOAD,
           "            torch.autograd.Variable._execution_engine.queue_callback(self.send_all_home)\n",
           "            pass\n",
           (f"{_EXACT}[ckpt-full-sync]",),
           "the end-of-backward send_all_home callback is never queued"),
    Mutant("grad_wait_per_parameter", OFFLOAD,
           "                offset += g.numel()\n            landed.append((group, dst))\n",
           "                offset += g.numel()\n                self._home_io.home_done()\n"
           "            landed.append((group, dst))\n",
           (f"{_GRADS_HOME}[full]",),
           "a layer's gradients go home with one wait per parameter (synchronous copies)"),
    Mutant("grads_home_pageable", OFFLOAD,
           'self._home_io = transfers if hasattr(transfers, "host_buffer") else HostCopies(self.home)',
           'self._home_io = HostCopies(self.home)',
           (f"{_GRADS_HOME}[lora]",),
           "gradients go home into pageable host memory, not the card seam's pinned buffers"),
    Mutant("oom_redo_without_freezing", TRAINER,
           "_sync_gradients(self.accelerator, boundary and not pending), _frozen(done):",
           "_sync_gradients(self.accelerator, boundary and not pending), _frozen(frozenset()):",
           ("tests/engine/test_oom.py::"
            "test_oom_in_the_middle_of_backward_leaves_exact_gradients[first-micro-batch-no-ckpt]",),
           "an OOM-split slice is redone without freezing the parameters that already accumulated it"),
    Mutant("never_evict", OFFLOAD,
           "        while len(self._resident) >= self.max_resident:\n", "        while False:\n",
           (f"{_EXACT}[ckpt-full-sync]",),
           "no layer is ever sent home to make room"),
    # the two leaks the H200 found (docs/BENCHMARKS.md "GPU"): they show only on a card as memory, so the CPU tests
    # that stand for them must be seen to fail
    Mutant("grad_hook_holds_trainer", TRAINER,
           "p.register_post_accumulate_grad_hook(partial(_notify_touched, weakref.ref(self)))",
           "p.register_post_accumulate_grad_hook(partial(_notify_touched, lambda: self))",
           ("tests/engine/test_engine_release.py::test_the_model_is_released_when_the_run_returns[lora]",),
           "a parameter hook holds the trainer (and so the model) strongly after the run returns"),
    Mutant("offload_autocast_cache_on", TRAINER,
           "self.accelerator.autocast_handler = AutocastKwargs(cache_enabled=False)",
           "self.accelerator.autocast_handler = None",
           ("tests/engine/test_engine_release.py::test_layerwise_offload_keeps_no_autocast_weight_cache",),
           "layer-wise offload keeps autocast's weight-cast cache (every layer's 16-bit copy stays on the card)"),
    Mutant("pack_keeps_card_copy", OFFLOAD,
           '        key = _storage_key(t)\n        found = self._on_card.get(key)\n',
           '        return t\n        key = _storage_key(t)\n        found = self._on_card.get(key)\n',
           (f"{_EXACT}[no-ckpt-full-sync]",),
           "autograd's saved weights keep the card copy alive (pack returns the tensor itself)"),
    # the code for a card that a CPU run never takes: each test drives it on an emulated card
    Mutant("activation_offload_dropped", "studio/engine/run.py",
           '    offload = cfg.offload_activations and device == "cuda"\n', "    offload = False\n",
           ("tests/engine/test_activation_offload.py::test_offload_reaches_every_checkpointed_layer_on_a_card",),
           "offload_activations never reaches transformers' activation_checkpointing_enable on a card"),
    Mutant("liger_never_planned", "studio/models/kernels.py",
           "    return KernelPlan(True)\n", '    return KernelPlan(False, "arch")\n',
           ("tests/models/test_kernels.py::test_a_card_with_liger_and_a_supported_architecture_uses_liger",),
           "a card with liger-kernel and a supported architecture keeps the chunked head"),
    Mutant("card_padding_free_off", "studio/engine/batching.py",
           '    return "padding_free" if "flash" in impl or impl == "flex_attention" else "token_budget"\n',
           '    return "token_budget"\n',
           ("tests/engine/test_padding_free.py::test_the_card_plan_by_attention_kernel",),
           "a card with FlashAttention still pads its batches"),
    Mutant("hip_bf16_assumed", "studio/models/precision.py",
           "                return cls(cuda=True, bf16=hip_bf16(arch), hip=True, arch=arch)\n",
           "                return cls(cuda=True, bf16=True, hip=True, arch=arch)\n",
           ("tests/models/test_rocm.py::test_an_amd_card_is_recognised_with_its_bf16",),
           "every AMD card is taken to have bf16 (RDNA2 and MI100 would train in emulated bf16)"),
    Mutant("token_count_on_the_card", "studio/engine/studio_trainer.py",
           "            self.token_counter(host[TOKENS_KEY] if TOKENS_KEY in host else\n",
           '            self.token_counter(int(inputs["input_ids"].ne(-1).sum()) if TOKENS_KEY in host else\n',
           ("tests/engine/test_step_sync.py::test_no_host_sync_outside_logging_steps[full-selective]",),
           "the step counts tokens on the card (an .item() every micro-batch) instead of taking the host's count"),
    Mutant("qlora_checkpointing_reenabled", "studio/models/loading.py",
           "prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)",
           "prepare_model_for_kbit_training(model, use_gradient_checkpointing=cfg.gradient_checkpointing)",
           ("tests/engine/test_activation_offload.py::test_offload_survives_qlora_through_the_engines_build",),
           "peft re-enables checkpointing for QLoRA with empty kwargs (activation offload dropped)"),
    Mutant("batches_copied_blocking", "studio/engine/arguments.py",
           'accelerator_config={"non_blocking": device == "cuda"},', 'accelerator_config={"non_blocking": False},',
           ("tests/engine/test_step_sync.py::test_a_card_run_copies_batches_without_waiting[True]",),
           "a card run copies each batch with non_blocking=False (the host waits once per micro-batch)"),
    Mutant("flash_on_every_card", "studio/models/kernels.py",
           '    return "flash_attention_2" if flash_attention_runs(device_caps(device)) else None\n',
           '    return "flash_attention_2"\n',
           ("tests/models/test_rocm.py::"
            "test_flash_attention_only_where_its_build_runs_on_the_card[amd-gfx1100-False]",),
           "FlashAttention-2 is asked for on a card its build does not support (a Radeon)"),
    Mutant("rocm_notices_after_the_load", "studio/engine/run.py",
           "        warn_card(run, caps, cfg)\n", "        pass\n",
           ("tests/models/test_rocm.py::test_the_rocm_notices_come_before_the_model_load",),
           "the ROCm notices are not in the run's log before the model load"),
]

PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-W", "ignore", "--no-header", "-o",
               "addopts=", "-m", "not gpu and not integration"]
# third-party modules every guarding test imports: loaded once in this process, and each mutant's pytest is a fork of
# it (the studio's own modules, which the edits change, are imported by the fork only, after its edit)
PRELOAD = ("torch", "transformers", "peft", "accelerate", "pytest")


def _child_env(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("STUDIO_INJECT_OOM_ABOVE", None)
    return env


def _preload(tree: Path) -> bool:
    """Make this process what a fresh ``python -m pytest`` in ``tree`` is before it reads a test file (its
    environment, tests/conftest.py's thread and offline settings, ``tree`` first on the path, no bytecode
    written) and import PRELOAD. False (run each pytest as a subprocess) without fork, or when an import
    started a thread, which a fork would not carry."""
    import threading
    if not hasattr(os, "fork") or any(m == "studio" or m.startswith("studio.") for m in sys.modules):
        return False
    os.environ.clear()
    os.environ.update(_child_env(tree))
    for key, value in (("TOKENIZERS_PARALLELISM", "false"), ("OMP_NUM_THREADS", "1"), ("HF_HUB_OFFLINE", "1")):
        os.environ.setdefault(key, value)  # as tests/conftest.py sets them before any test module imports torch
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(tree))
    import importlib
    for name in PRELOAD:
        importlib.import_module(name)
    for name in ("AutoModelForCausalLM", "Trainer", "TrainingArguments"):  # transformers imports these lazily
        getattr(sys.modules["transformers"], name)
    return threading.active_count() == 1


def _forked_pytest(tree: Path, tests: list[str], timeout: float) -> tuple[bool, str, float]:
    """pytest in a fork of this process (see _preload): what _subprocess_pytest does, without its imports."""
    import signal
    log = tree / ".mutant-pytest.log"
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.setsid()  # its own process group: a timeout ends what its tests started too
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(tree)
            import pytest
            code = int(pytest.main([*PYTEST_ARGS, *tests]))
        except BaseException:  # noqa: BLE001 - reported in the log; the exit code says it failed
            import traceback
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() - start > timeout:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:  # killed before its setsid
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return False, "timed out", time.perf_counter() - start
        time.sleep(0.05)
    lines = [ln for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return os.waitstatus_to_exitcode(status) == 0, lines[-1] if lines else "", time.perf_counter() - start


def _subprocess_pytest(tree: Path, tests: list[str], timeout: float) -> tuple[bool, str, float]:
    cmd = [sys.executable, "-m", "pytest", *PYTEST_ARGS, *tests]
    env = _child_env(tree)
    start = time.perf_counter()
    try:
        res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timed out", time.perf_counter() - start
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    return res.returncode == 0, lines[-1] if lines else res.stderr[-300:], time.perf_counter() - start


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


def run(mutants: list[Mutant], timeout: float = 300, baseline: bool = True, fork: bool = True) -> int:
    """Apply each mutant to a copy, run its tests; print the table; 0 when every mutant is caught.

    ``baseline=False`` skips running the guarding tests unmutated first: only for a caller that has just run
    them green itself (the CI suite runs every one of them), so a "caught" cannot come from tests already red.
    ``fork=False`` starts every pytest as a fresh ``python`` (the studio's modules are fresh in a fork too)."""
    with tempfile.TemporaryDirectory(prefix="studio-mutants-") as tmp:
        tree = Path(tmp)
        _copy_tree(tree)
        for m in mutants:  # every edit must still apply: a stale one would "survive" for the wrong reason
            count = (tree / m.path).read_text(encoding="utf-8").count(m.old)
            if count != 1:
                print(f"ERROR: mutant {m.name}: its text occurs {count} times in {m.path} (expected once); "
                      "update bench/mutants.py", file=sys.stderr)
                return 2
        guard = sorted({t for m in mutants for t in m.tests})
        _pytest = _forked_pytest if fork and _preload(tree) else _subprocess_pytest
        ok, last, secs = _pytest(tree, guard, timeout) if baseline else (True, "skipped: run by the caller", 0.0)
        print(f"baseline (unmutated, {len(guard)} test ids): {'green' if ok else 'RED'} in {secs:.0f} s: {last}",
              flush=True)
        if not ok:
            print("ERROR: the unmutated tests fail; the mutants would prove nothing", file=sys.stderr)
            return 2
        rows = []
        for m in mutants:
            path = tree / m.path
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(m.old, m.new), encoding="utf-8")
            try:
                passed, last, secs = _pytest(tree, list(m.tests), timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            verdict = "survived" if passed else "caught"
            rows.append((m.name, verdict, secs, last))
            print(f"  {m.name}: {verdict} ({secs:.0f} s)", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n| {'mutant'.ljust(width)} | verdict  | s   | last line of the tests |")
    print(f"|{'-' * (width + 2)}|----------|-----|---|")
    for name, verdict, secs, last in rows:
        print(f"| {name.ljust(width)} | {verdict.ljust(8)} | {secs:3.0f} | {last[:90]} |")
    survivors = [r[0] for r in rows if r[1] == "survived"]
    print(f"\n{len(rows) - len(survivors)} of {len(rows)} mutants caught" +
          (f"; SURVIVED: {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="run only these mutants")
    ap.add_argument("--list", action="store_true", help="print the mutants and their tests")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per pytest run")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated run of the guarding tests (only when you have just run them green)")
    ap.add_argument("--no-fork", action="store_true", help="a fresh python for each pytest, not a fork of this one")
    args = ap.parse_args(argv)
    by_name = {m.name: m for m in MUTANTS}
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        ap.error(f"unknown mutant(s) {', '.join(unknown)}; choose from {', '.join(by_name)}")
    chosen = [by_name[n] for n in args.names] if args.names else MUTANTS
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.what} ({m.path})\n    " + "\n    ".join(m.tests))
        return 0
    return run(chosen, args.timeout, baseline=not args.no_baseline, fork=not args.no_fork)


if __name__ == "__main__":
    sys.exit(main())
