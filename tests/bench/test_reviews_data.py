"""The review data the product ships (sample CSV) and the synthetic held-out set it is judged on."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from bench.reviews import main, make_reviews

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "studio" / "assets" / "sample_reviews.csv"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(SAMPLE, encoding="utf-8", keep_default_na=False)


def test_sample_csv_shape_and_values(sample):
    assert list(sample.columns) == ["text", "label", "lang"]
    assert len(sample) >= 350
    assert set(sample["label"]) == {"positive", "negative"}
    assert set(sample["lang"]) == {"en", "zh"}
    assert (sample["text"].str.strip().str.len() > 0).all()
    assert not sample["text"].duplicated().any(), sample["text"][sample["text"].duplicated()].tolist()


def test_sample_csv_lang_column_matches_text(sample):
    is_zh = sample["text"].map(lambda t: bool(CJK.search(t)))
    assert (is_zh == (sample["lang"] == "zh")).all()


def test_sample_csv_labels_balanced_overall_and_per_language(sample):
    assert 0.4 <= (sample["label"] == "positive").mean() <= 0.6
    for lang, part in sample.groupby("lang"):
        assert 0.4 <= (part["label"] == "positive").mean() <= 0.6, lang
        assert 0.4 <= len(part) / len(sample) <= 0.6, lang


def test_make_reviews_is_deterministic_per_seed():
    assert make_reviews(300, seed=7, lang="mix") == make_reviews(300, seed=7, lang="mix")
    assert make_reviews(300, seed=7) != make_reviews(300, seed=8)


def test_make_reviews_balanced_labels_and_languages():
    rows = make_reviews(1000, seed=3, lang="mix")
    assert len(rows) == 1000
    assert all(set(r) == {"text", "label", "lang"} for r in rows)
    counts = Counter((r["lang"], r["label"]) for r in rows)
    assert counts == {("en", "positive"): 250, ("en", "negative"): 250, ("zh", "positive"): 250,
                      ("zh", "negative"): 250}
    assert all(bool(CJK.search(r["text"])) == (r["lang"] == "zh") for r in rows)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_make_reviews_single_language(lang):
    rows = make_reviews(101, seed=1, lang=lang)
    assert {r["lang"] for r in rows} == {lang}
    assert abs(sum(r["label"] == "positive" for r in rows) - 50.5) <= 0.5


def test_make_reviews_mostly_unique_and_unlike_the_sample(sample):
    rows = make_reviews(3000, seed=7, lang="mix")
    texts = [r["text"] for r in rows]
    assert len(set(texts)) >= 0.98 * len(texts)
    shared = set(texts) & set(sample["text"])
    assert len(shared) < 0.05 * len(texts), sorted(shared)[:10]


def test_make_reviews_has_reviews_that_need_more_than_one_keyword():
    rows = make_reviews(2000, seed=11, with_kind=True)
    kinds = Counter(r["kind"] for r in rows)
    assert (kinds["negation"] + kinds["contrast"] + kinds["mixed"]) / len(rows) >= 0.10
    # Each kind carries both labels, so the structure itself never gives the answer away.
    for kind in ("negation", "contrast", "mixed"):
        labels = Counter(r["label"] for r in rows if r["kind"] == kind)
        assert labels["positive"] > 0 and labels["negative"] > 0, kind


def test_make_reviews_rejects_bad_arguments():
    with pytest.raises(ValueError, match="lang must be 'mix', 'en' or 'zh', got 'fr'"):
        make_reviews(10, lang="fr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be >= 0"):
        make_reviews(-1)


def test_cli_writes_a_csv_pandas_reads(tmp_path, capsys):
    out = tmp_path / "held" / "out.csv"
    assert main(["--n", "40", "--seed", "7", "--lang", "zh", "--out", str(out)]) == 0
    assert f"wrote 40 reviews to {out} (20 positive, 20 negative)" in capsys.readouterr().out
    frame = pd.read_csv(out, encoding="utf-8")
    assert list(frame.columns) == ["text", "label", "lang"]
    assert frame.to_dict("records") == make_reviews(40, seed=7, lang="zh")
