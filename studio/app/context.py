"""AppContext: what every tab builder gets (``build_<tab>_tab(ctx)``).

Fields:
    workspace:     the studio's working folder; relative paths typed in the UI are relative to it.
    runs_root:     where run folders go (workspace/runs); the job runner lists runs from here.
    data_root:     where converted datasets and dataset_info.json go (workspace/data).
    allowed_roots: the only folders a typed path (model, data, output, DeepSpeed JSON) may point into:
                   the workspace plus any ``--data-root``; check with ``studio.app.paths.confine``.
    nvme_roots:    the folders the operator named with ``--nvme-root``: the only ones offload_nvme_path may
                   name from the page (DeepSpeed writes there); none by default.
    runner:        the one ``studio.runs.jobs.JobRunner`` (server-side state: reloads re-attach to it).
    lang:          'en' or 'zh': the language words are built in. The server's default (--lang, else 'en')
                   in the context a page is built with; the browser's own in the one its handler is given
                   (``answering``, made by studio/ui/handlers.py from the request it answers).
    user:          the login being answered; None without logins, at build time and outside the page.
    forced_lang:   --lang as given (None: each browser's own language wins over ``lang``).
    max_upload_mb: largest accepted upload in MB.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import StudioError
from ..runs.jobs import JobRunner
from ..safe_files import register_roots
from ..workspace import safe_name


@dataclass
class AppContext:
    workspace: Path
    runs_root: Path
    data_root: Path
    allowed_roots: list[Path]
    runner: JobRunner
    lang: str = "en"
    max_upload_mb: float = 50.0
    max_model_upload_mb: float = 4096.0  # .gguf uploads in Settings (studio/app/uploads.py)
    allow_remote_code: bool = False  # only launch.py --trust-remote-code sets it, never the web page
    nvme_roots: list[Path] = field(default_factory=list)  # launch.py --nvme-root: where offload_nvme_path may point
    extra: dict = field(default_factory=dict)  # room for later tabs; never needed by the core ones
    user: str | None = None
    forced_lang: str | None = None

    def answering(self, *, lang: str, user: str | None) -> "AppContext":
        """This context for one answer to one browser: its language and login; everything else shared (the same
        runner, folders and ``extra``), so what a handler changes there every later answer sees."""
        return replace(self, lang=lang, user=user)

    def own_folder(self, user: str | None = None) -> Path:
        """Where a login's own files live (its settings, the settings it saves as YAML): workspace/users/<user>/
        with a login, else the workspace itself. ``user`` defaults to the login this context answers.

        Teammates on one studio each keep their own (one shared file let a stale page of one user overwrite
        another's choice, and a viewer's Save wrote the file an owner's command line runs)."""
        user = user if user is not None else self.user
        if not user:
            return self.workspace
        try:
            return self.workspace / "users" / safe_name(user)
        except StudioError:
            # a user name that is no folder name still gets a folder of its own
            return self.workspace / "users" / hashlib.sha256(user.encode()).hexdigest()[:16]

    def role(self) -> str:
        """'owner' or 'viewer' for the login this context answers: a login listed as a viewer in
        ``extra["roles"]`` (launch.py's --auth-file) is a viewer; everyone else, and a studio without logins, an
        owner. The one place a role is read: the page's banner and every owner action's own check ask here."""
        if self.user is None:
            return "owner"
        return (self.extra.get("roles") or {}).get(self.user, "owner")

    @classmethod
    def create(cls, workspace: str | Path, *, data_roots: list[str | Path] | None = None, lang: str = "en",
               max_upload_mb: float = 50.0, max_model_upload_mb: float = 4096.0,
               runner: JobRunner | None = None, nvme_roots: list[str | Path] | None = None) -> "AppContext":
        """The standard layout under ``workspace`` (folders are created)."""
        ws = Path(workspace).expanduser().resolve()
        runs, data = ws / "runs", ws / "data"
        for p in (ws, runs, data):
            try:
                p.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a read-only disk, no permission: not a bare '[Errno 30]'
                raise StudioError.of("app.workspace_unwritable", path=p, detail=str(exc.strerror or exc)) from None
        roots = [ws] + [Path(d).expanduser().resolve() for d in (data_roots or [])]
        register_roots(roots)  # links into these are not links out (studio/safe_files.py)
        return cls(workspace=ws, runs_root=runs, data_root=data, allowed_roots=roots,
                   runner=runner or JobRunner(runs), lang=lang, max_upload_mb=max_upload_mb,
                   max_model_upload_mb=max_model_upload_mb,
                   nvme_roots=[Path(d).expanduser().resolve() for d in (nvme_roots or [])])
