"""The pictures the documents show are the ones docs/make_screenshots.py makes, in both languages.

Every image a README or guide shows exists, each language's guide shows its own language's screenshots, and every
screenshot the script saved is shown somewhere (a step added to the script without a place in the guide, or a
picture left behind after a step was removed, fails here).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"en": [ROOT / "README.md", ROOT / "docs" / "GUIDE.md"], "zh": [ROOT / "README.zh.md", ROOT / "docs" / "GUIDE.zh.md"]}
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def shown(doc: Path) -> list[Path]:
    return [(doc.parent / m).resolve() for m in IMAGE.findall(doc.read_text(encoding="utf-8"))]


def test_every_image_a_document_shows_exists_in_its_own_language():
    for lang, docs in DOCS.items():
        for doc in docs:
            images = shown(doc)
            assert images, doc.name
            missing = [str(p.relative_to(ROOT)) for p in images if not p.is_file()]
            assert missing == [], (doc.name, missing)
            other = [str(p.relative_to(ROOT)) for p in images if p.parent.name in DOCS and p.parent.name != lang]
            assert other == [], (doc.name, other)


def test_every_screenshot_is_shown_by_the_guide_of_its_language():
    for lang, docs in DOCS.items():
        made = {p.resolve() for p in (ROOT / "docs" / "img" / lang).glob("*.png")}
        used = {p for doc in docs for p in shown(doc)}
        assert made and made <= used, sorted(str(p.relative_to(ROOT)) for p in made - used)
