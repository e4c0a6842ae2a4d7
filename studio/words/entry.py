"""The one shape of the studio's words: a code with (English, Chinese) for each surface, and the registry that
holds them.

Every word a person reads is an ``Entry``: a field's label or help, a page label the browser translates, a message
the server builds, an error's what / why / fix, a notice, an end reason, a data-report problem, a line of the
model's preparation. ``cli`` is what the command line (and a log, and status.json's English) says, ``page`` what
the page says, where it may name only the page's own fields. The entry files of this package are lists of entries
made by the constructors below; ``Catalog`` joins them and refuses a code defined twice, so the second definition
of a code fails at import instead of silently winning (as a dict literal's later key does).

How an entry is worded with its values (settings named per surface, lists, plurals, closed-set values):
studio/words/render.py. This module imports nothing of the studio.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

Pair = tuple[str, str]  # (English, Chinese)
LANGS = ("en", "zh")
SURFACES = ("cli", "page")


@dataclass(frozen=True)
class Entry:
    """The words of one code: ``cli`` and ``page``, each (English, Chinese). ``browser``: a label the page's
    browser translates itself (``gr.I18n``), not one the server builds."""

    code: str
    cli: Pair
    page: Pair
    browser: bool = False

    def text(self, lang: str, surface: str) -> str:
        """The words for ``surface`` in ``lang`` (English for a language the catalog lacks)."""
        pair = self.page if surface == "page" else self.cli
        return pair[LANGS.index(lang) if lang in LANGS else 0]


class DuplicateCode(RuntimeError):
    """A code defined twice: the catalog would keep one of the two in silence."""


class Catalog(Mapping[str, Entry]):
    """Entries by code, from lists of entries (an item may be a group of entries, as ``error`` makes); a code
    defined a second time raises ``DuplicateCode``."""

    def __init__(self, *groups: Iterable[Entry | Iterable[Entry]]) -> None:
        self._entries: dict[str, Entry] = {}
        for group in groups:
            for item in group:
                for entry in (item,) if isinstance(item, Entry) else item:
                    if entry.code in self._entries:
                        raise DuplicateCode(f"the code {entry.code!r} is defined twice in studio/words/: keep one")
                    self._entries[entry.code] = entry

    def __getitem__(self, code: str) -> Entry:
        return self._entries[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _pair(words: Pair, what: str) -> Pair:
    if not (isinstance(words, tuple) and len(words) == len(LANGS)):
        raise TypeError(f"{what}: words are (English, Chinese), not {words!r}")
    return words


# ---------------------------------------------------------------- the constructors (one per kind, one shape)
def message(code: str, en: str, zh: str, *, page: Pair | None = None) -> Entry:
    """Words the server builds: the same on both surfaces, unless ``page`` gives the page's own."""
    return Entry(code, (en, zh), _pair(page, code) if page else (en, zh))


def label(code: str, en: str, zh: str) -> Entry:
    """A page label the browser translates (``gr.I18n``: tab names, buttons, a widget's label and info)."""
    return Entry(code, (en, zh), (en, zh), browser=True)


def field(key: str, *, label: Pair, help: Pair) -> tuple[Entry, Entry]:
    """A RunConfig field's Settings label (``f.<key>``) and help (``h.<key>``); the help may name other
    settings as ``{f_<key>}`` and values the config's vocabulary fills in."""
    return (Entry(f"f.{key}", _pair(label, key), label, browser=True),
            Entry(f"h.{key}", _pair(help, key), help, browser=True))


def error(code: str, *, what: Pair, why: Pair | None = None, fix: Pair | None = None,
          page_fix: Pair | None = None) -> tuple[Entry, ...]:
    """A StudioError's words: ``code`` (what is wrong, the same on both surfaces), ``code.why`` and ``code.fix``
    (the command line's fix, which may name flags; ``page_fix`` the page's, where it differs)."""
    out = [Entry(code, _pair(what, code), what)]
    if why:
        out.append(Entry(f"{code}.why", _pair(why, code), why))
    if fix:
        out.append(Entry(f"{code}.fix", _pair(fix, code), _pair(page_fix, code) if page_fix else fix))
    elif page_fix:
        raise TypeError(f"{code}: a page fix without the command line's fix")
    return tuple(out)


def notice(code: str, *, cli: str | Pair, page: Pair) -> Entry:
    """A training notice: the run log's and the command line's words (config keys, recipe files) and the page's.
    ``cli`` as English only: its Chinese is the page's (its settings named by their config keys there), for a
    notice whose two surfaces say the same with the same values."""
    return Entry(code, cli if isinstance(cli, tuple) else (cli, _pair(page, code)[1]), page)


def terms(prefix: str, *words: tuple[str, str, str]) -> list[Entry]:
    """The words of a closed set of values (a column's role, a JSON type): ``(value, English, Chinese)`` each,
    as ``<prefix>.<value>`` (a list, not a dict: a value given twice is refused like any code)."""
    return [message(f"{prefix}.{value}", en, zh) for value, en, zh in words]
