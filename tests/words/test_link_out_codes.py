"""A link out of the studio's folders is refused with the words of the folder's kind (studio/safe_files.py): each
kind a caller names has its own code in the catalog (studio/words/app_errors.py), so a new kind is caught here, not
as a KeyError in front of a user."""
from __future__ import annotations

from pathlib import Path

import pytest

from studio.errors import StudioError
from studio.safe_files import _LINK_OUT, refuse_links_out
from studio.words.render import UnknownCode, has


def test_a_folder_kind_without_words_fails_on_its_first_call(tmp_path: Path) -> None:
    """Each kind a caller names has its own code; a new kind without one fails the first time it is passed,
    whether or not the folder holds a link (not as a KeyError in front of a user)."""
    with pytest.raises(UnknownCode, match="dataset folder"):
        refuse_links_out(tmp_path, "dataset folder")
    for what, code in _LINK_OUT.items():
        refuse_links_out(tmp_path, what)  # no link: nothing to refuse
        assert has(code), code


@pytest.mark.parametrize("what,lead,zh", [("folder", "The folder", "文件夹"), ("run folder", "The run folder", "运行文件夹"),
                                          ("model folder", "The model folder", "模型文件夹")])
def test_a_link_out_names_the_folder_and_its_links(tmp_path: Path, what: str, lead: str, zh: str) -> None:
    inside, outside = tmp_path / "ws" / "run1", tmp_path / "elsewhere"
    inside.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (inside / "leak.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(StudioError) as err:
        refuse_links_out(inside, what)
    assert err.value.code == _LINK_OUT[what] and err.value.message.startswith(
        f"{lead} 'run1' holds a link to a file outside the studio's folders ('run1/leak.txt'). Fix: remove the link")
    assert err.value.text("zh", "page").startswith(f"{zh}“run1”中有一个指向本工作室文件夹之外的链接")
