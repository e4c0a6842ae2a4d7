"""Resource limits, reads outside the roots, encodings. Each test failed before its fix."""
from __future__ import annotations

import threading
import zipfile
from pathlib import Path

import pytest

from studio.config.run_config import RunConfig, load_yaml_dict, parse_overrides
from studio.data import limits
from studio.data.readers import read_table
from studio.errors import ConfigError, StudioError


def _xlsx(path: Path, rows: int, cols: int = 2) -> Path:
    """A real workbook whose sheet XML is replaced by ``rows`` rows (fast: zlib loves repetition)."""
    import openpyxl
    wb = openpyxl.Workbook()
    wb.active.append(["text", "label"])
    wb.save(path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    cells = "".join(f'<c t="inlineStr"><is><t>v{c}</t></is></c>' for c in range(cols))
    body = "".join(f"<row>{cells}</row>" for _ in range(rows))
    members["xl/worksheets/sheet1.xml"] = (
        '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
        f'spreadsheetml/2006/main"><sheetData>{body}</sheetData></worksheet>').encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_xlsx_zip_bomb_refused_before_parsing(tmp_path: Path) -> None:
    bomb = _xlsx(tmp_path / "bomb.xlsx", 120_000)
    assert bomb.stat().st_size < 200_000  # small on disk, ~6 MB of XML inside
    with pytest.raises(StudioError) as err:
        read_table(bomb, max_mb=1)
    assert err.value.code == "data.sheet_unpacks"
    assert "unpacks to" in err.value.what and "over the" in err.value.what


def test_row_and_column_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_ROWS", 100)
    monkeypatch.setattr(limits, "MAX_COLUMNS", 10)
    csv_file = tmp_path / "many.csv"
    csv_file.write_text("text,label\n" + "a,b\n" * 101)
    with pytest.raises(StudioError, match="more than 100 rows") as err:
        read_table(csv_file)
    assert err.value.code == "data.too_many_rows"
    with pytest.raises(StudioError, match="more than 100 rows"):
        read_table(_xlsx(tmp_path / "rows.xlsx", 150))
    with pytest.raises(StudioError, match="11 columns, over the limit of 10"):
        read_table(_xlsx(tmp_path / "wide.xlsx", 3, cols=11))
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(11)) + "\n" + ",".join("x" * 11) + "\n")
    with pytest.raises(StudioError, match="11 columns, over the limit of 10"):
        read_table(wide)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def test_yaml_alias_bomb_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert bomb.stat().st_size < 500
    with pytest.raises(StudioError) as err:
        load_yaml_dict(bomb)
    assert err.value.code == "config.file_aliases" and "aliases" in err.value.what
    with pytest.raises(StudioError, match="aliases"):
        parse_overrides(["dataset=[&a [1,1,1,1], [*a,*a,*a,*a], [*a,*a,*a,*a], [*a,*a,*a,*a], [*a,*a,*a,*a], "
                         "[*a,*a,*a,*a], [*a,*a,*a,*a], [*a]]"])


def test_small_yaml_anchors_still_load(tmp_path: Path) -> None:
    ok = tmp_path / "ok.yaml"
    ok.write_text("x: &lr 0.001\nlearning_rate: *lr\n")
    assert load_yaml_dict(ok)["learning_rate"] == 0.001


def test_yaml_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("dataset: " + "a" * 300_000 + "\n")
    with pytest.raises(StudioError, match="over the 256 KB limit"):
        load_yaml_dict(big)


# ------------------------------------------------------------------ generation caps
class _FakeLoaded:
    def __init__(self) -> None:
        self.lock = threading.Lock()


def test_prompt_length_and_token_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.evaluation import inference
    monkeypatch.setattr(inference, "get_model", lambda path: pytest.fail("the model must not be touched"))
    with pytest.raises(StudioError, match="The prompt is 400,000 characters long, over the limit of"):
        next(inference.playground("run", "x" * 400_000))
    with pytest.raises(StudioError, match="The message is 400,000 characters long"):
        next(inference.chat_stream("run", [], "y" * 400_000))
    with pytest.raises(StudioError, match="Max new tokens must be between 1 and"):
        next(inference.playground("run", "hi", max_new_tokens=10 ** 9))


def test_busy_model_answers_busy_instead_of_blocking(monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.evaluation import inference
    loaded = _FakeLoaded()
    monkeypatch.setattr(inference, "get_model", lambda path: loaded)
    monkeypatch.setattr(inference, "GENERATION_WAIT_S", 0.2)
    loaded.lock.acquire()
    result: list[BaseException] = []

    def call() -> None:
        try:
            next(inference.playground("run", "hello"))
        except BaseException as exc:  # noqa: BLE001
            result.append(exc)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "a second generate request blocked behind the first"
    assert isinstance(result[0], StudioError) and result[0].code == "eval.busy"


def test_generate_has_a_time_cap() -> None:
    import inspect

    from studio.evaluation import evaluate
    assert evaluate.MAX_GENERATE_S > 0
    assert "max_time=MAX_GENERATE_S" in inspect.getsource(evaluate._generate_ids)


# ------------------------------------------------------------------ encodings
def test_mixed_utf8_and_cp1252_rows_refused_naming_the_rows(tmp_path: Path) -> None:
    f = tmp_path / "mixed.csv"
    good = "text,label\n" + "".join(f"这个手机很好 {i},positive\n" for i in range(20))
    f.write_bytes(good.encode("utf-8") + "caf\u00e9 cr\u00e8me,negative\n".encode("cp1252")
                  + "质量差,negative\n".encode("utf-8"))
    with pytest.raises(StudioError) as err:
        read_table(f)
    assert err.value.code == "data.mixed_encodings"
    assert "mixes encodings" in err.value.what and "line 22" in err.value.what


def test_nul_byte_after_8kb_refused(tmp_path: Path) -> None:
    f = tmp_path / "nul.csv"
    f.write_bytes(b"text,label\n" + b"hello world,positive\n" * 1000 + b"bad\x00row,negative\n")
    with pytest.raises(StudioError) as err:
        read_table(f)
    assert err.value.code == "data.nul_byte" and "NUL" in err.value.what and "line 1002" in err.value.what


# ------------------------------------------------------------------ reads outside the roots
def test_live_estimate_does_not_read_outside_the_roots(tmp_path: Path) -> None:
    from studio.app.context import AppContext
    from studio.ui.settings_tab import on_change
    from studio.ui import forms
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text('{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, '
                                         '"num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100}')
    (outside / "ds.json").write_text('{"zero_optimization": {"stage": 3}}')
    ctx = AppContext.create(tmp_path / "ws")
    for cfg in (RunConfig(dataset="d.jsonl", model_name_or_path=str(outside)),
                RunConfig(dataset="d.jsonl", deepspeed=str(outside / "ds.json")),
                RunConfig(dataset="d.jsonl", deepspeed=str(outside / "missing.json"))):
        fit, check = on_change(ctx, forms.config_to_values(cfg), 24.0)
        assert "outside the folders this studio may use" in fit + check
        assert "llama" not in fit and "stage" not in fit and "No such file" not in fit + check


def test_relative_model_name_resolves_in_the_workspace_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.app.context import AppContext
    from studio.app.paths import resolve_run_paths
    ctx = AppContext.create(tmp_path / "ws")
    cwd = tmp_path / "cwd"
    (cwd / "studio" / "assets").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    with pytest.raises(StudioError) as err:
        resolve_run_paths(RunConfig(dataset="d.jsonl", model_name_or_path="studio/assets"), ctx)
    assert "studio/assets" in err.value.what and str(cwd) not in err.value.message
