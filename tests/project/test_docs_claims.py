"""The benchmark page's claims table is the one list of what the studio claims, and each claim can be re-measured.

docs/BENCHMARKS.md opens with a table of current claims; every command named there must exist (the script file, and
each `--flag` in the script's own argument parser), and every measured number the READMEs quote must be in that table,
so a number cannot stay in a README after its claim was re-measured or dropped.
"""
from __future__ import annotations

import ast
import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT

BENCH = ROOT / "docs" / "BENCHMARKS.md"
READMES = [ROOT / "README.md", ROOT / "README.zh.md"]
COLUMNS = ["what", "number", "baseline it beats", "command", "last measured"]


def claims_table(text: str) -> list[dict[str, str]]:
    """The rows of the table under '## Current claims', as column -> cell."""
    section = text.split("## Current claims", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head == COLUMNS, head
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().strip("|"))]
        assert len(cells) == len(COLUMNS), ln
        rows.append(dict(zip(COLUMNS, cells)))
    return rows


def commands(cell: str) -> list[list[str]]:
    """Each `code span` of a command cell that is a command line, split into words."""
    out = []
    for span in re.findall(r"`([^`]+)`", cell):
        words = shlex.split(span)
        if words and (words[0] in ("python", "python3", "bash") or words[0].endswith("/python")
                      or shutil.which(words[0]) or words[0].startswith("/usr/bin/")):
            out.append(words)
    return out


def _flags_accepted(source_files: list[Path]) -> set[str]:
    """Every '--flag' given to add_argument in these files (argparse only: the parser is the contract)."""
    flags: set[str] = set()
    for path in source_files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
                flags |= {a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")}
    return flags


def problems_of(words: list[str]) -> list[str]:
    """Why this command line would not run as written (empty: it would)."""
    if words[0] == "/usr/bin/time":
        words = words[1:]
    prog, args = words[0], words[1:]
    if prog in ("python", "python3") or prog.endswith("/python"):
        if args[:1] == ["-c"]:
            code = args[1]
            tree = ast.parse(code)
            bad = []
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    module = ROOT / Path(*node.module.split("."))
                    src = module.with_suffix(".py") if module.with_suffix(".py").exists() else module / "__init__.py"
                    if not src.exists():
                        bad.append(f"no module {node.module}")
                        continue
                    defined = {n.name for n in ast.walk(ast.parse(src.read_text(encoding="utf-8")))
                               if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
                    bad += [f"{node.module} has no {a.name}" for a in node.names if a.name not in defined]
            return bad
        if args[:2] == ["-m", "pytest"]:
            files = [a for a in args[2:] if a.startswith("tests/")]
            return [f"no test file {f}" for f in files if not (ROOT / f.split("::")[0]).exists()] or \
                ([] if files else ["a pytest command names no test file"])
        if args[:2] == ["-m", "studio"]:
            verb = args[2]
            module = ROOT / "studio" / "cli" / f"{'evaluate' if verb == 'eval' else verb}.py"
            if not module.exists():
                return [f"no CLI verb {verb}"]
            return _check_args(args[3:], [module, ROOT / "studio" / "cli" / "main.py"])
        script = ROOT / args[0]
        if not script.exists():
            return [f"no script {args[0]}"]
        extra = [ROOT / "bench" / "common.py"] if "bench.common" in script.read_text(encoding="utf-8") or \
            "from common import" in script.read_text(encoding="utf-8") else []
        return _check_args(args[1:], [script, *extra])
    if prog == "bash":
        return [] if (ROOT / args[0]).exists() else [f"no script {args[0]}"]
    return [] if shutil.which(prog) else [f"no program {prog}"]


def _check_args(args: list[str], sources: list[Path]) -> list[str]:
    accepted = _flags_accepted(sources)
    bad = [f"{a.split('=')[0]} is not a flag of {sources[0].relative_to(ROOT)}" for a in args
           if a.startswith("--") and a.split("=")[0] not in accepted]
    bad += [f"no file {a}" for a in args if re.match(r"(bench|tests|presets|studio|docs)/", a) and not (ROOT / a).exists()]
    return bad


def test_the_claims_table_has_every_column_and_a_command_per_claim():
    rows = claims_table(BENCH.read_text(encoding="utf-8"))
    assert len(rows) >= 10
    for row in rows:
        assert row["what"] and row["number"], row
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["last measured"]), row
        assert commands(row["command"]), f"no command in {row['what']!r}"


def test_every_command_in_the_claims_table_exists_with_its_flags():
    bad = {}
    for row in claims_table(BENCH.read_text(encoding="utf-8")):
        for words in commands(row["command"]):
            found = problems_of(words)
            if found:
                bad[" ".join(words)] = found
    assert bad == {}


def test_the_check_itself_catches_a_missing_script_a_missing_flag_and_a_missing_function():
    assert problems_of(["python", "bench/no_such_bench.py"]) == ["no script bench/no_such_bench.py"]
    assert problems_of(["python", "bench/real_throughput.py", "--no-such-flag"])
    assert problems_of(["python", "-m", "studio", "eval", "--model", "RUN", "--no-such-flag"])
    assert problems_of(["python", "-c", "from studio.models.zoo import no_such_function"])
    assert problems_of(["python", "bench/real_throughput.py", "--arms", "derived"]) == []


NUMBER = re.compile(r"(?<![\w.=])\d[\d,]*\.\d+(?![\d.])"                      # 0.977, 2.3
                    r"|(?<![\w.])\d+(?:\.\d+)?(?=x\b)"                         # 1.96x
                    r"|(?<![\w.])\d+(?:\.\d+)?(?=\s?(?:%|s\b|ms\b|GB|MB|GiB|秒|分钟|minutes?\b))")  # 97.7%, 65 s


def quoted_numbers(text: str) -> set[str]:
    """Measured-looking numbers in prose: decimals (0.977, 2.3), ratios (1.96x), percentages, amounts of time and
    size (65 s, 98 MB); code blocks and version pins (torch==2.13.0, Python 3.11) are not claims."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"(?i)python\s*3\.\d+\+?", "", text)
    return set(NUMBER.findall(text))


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.name)
def test_every_number_a_readme_quotes_is_a_current_claim(readme: Path):
    table = "\n".join(" ".join(r.values()) for r in claims_table(BENCH.read_text(encoding="utf-8")))
    in_table = quoted_numbers(table) | set(re.findall(r"\d[\d,]*(?:\.\d+)?", table))
    missing = sorted(n for n in quoted_numbers(readme.read_text(encoding="utf-8")) if n not in in_table)
    assert missing == [], f"{readme.name} quotes numbers that are not in BENCHMARKS' claims table: {missing}"


def test_the_number_check_sees_ratios_decimals_and_percentages_but_not_versions():
    found = quoted_numbers("1.96x faster, accuracy 0.977, 97.7% agree, in 65 s (65 秒), 98 MB; Python 3.11+; "
                           "`torch==2.13.0`; port 7860; 5 tabs")
    assert found == {"1.96", "0.977", "97.7", "65", "98"}
