"""Export never writes or deletes outside the exports folder, and never deletes a folder it did not make.

Regression for the adversarial finding: ``export_run(run, exports, merge, overwrite, "../../x")`` wrote a
model outside the workspace and ``shutil.rmtree``'d the target's previous contents.
"""
from __future__ import annotations

from pathlib import Path

import pytest


from studio.errors import StudioError



def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "important"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return victim


@pytest.mark.parametrize("name", ["../important", "../../important", "sub/../../important", "/ABS/important",
                                  "a/b", "..", ".", "x\ny", "na\x00me"])
def test_export_name_cannot_leave_the_exports_folder(runs: dict, tmp_path: Path, name: str) -> None:
    from studio.evaluation.inference import export_run
    exports = tmp_path / "ws" / "exports"
    exports.mkdir(parents=True)
    victim = _victim(tmp_path)
    name = name.replace("/ABS", str(tmp_path))
    with pytest.raises(StudioError) as err:
        export_run(str(runs["lora"]), exports, merge=False, overwrite=True, name=name)
    assert err.value.code == "name.export"
    assert (victim / "precious.txt").read_text() == "keep me" and sorted(p.name for p in victim.iterdir()) == [
        "precious.txt"]
    assert list(exports.iterdir()) == []


def test_overwrite_never_deletes_a_folder_the_studio_did_not_create(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation.export import export_model
    victim = _victim(tmp_path)
    with pytest.raises(StudioError) as err:
        export_model(runs["lora"], victim, merge=False, overwrite=True)
    assert err.value.code == "export.exists_not_ours"
    assert (victim / "precious.txt").read_text() == "keep me"


def test_overwrite_replaces_a_previous_studio_export(runs: dict, tmp_path: Path) -> None:
    from studio.evaluation.inference import export_run
    exports = tmp_path / "exports"
    first = export_run(str(runs["lora"]), exports, merge=False, overwrite=False, name="mine")
    (Path(first["path"]) / "stale.txt").write_text("old")
    again = export_run(str(runs["lora"]), exports, merge=False, overwrite=True, name="mine")
    assert again["path"] == first["path"] and not (Path(again["path"]) / "stale.txt").exists()
