"""python -m studio feedback: teammates' feedback on a run's answers, reviewed from the command line.

    python -m studio feedback list [--run RUN] [--status new] [--login ann] [--label neutral]
    python -m studio feedback summary --run RUN          # counts by verdict, status, login, label; conflicts
    python -m studio feedback accept ID [ID ...]         # or: drop ID ..., reopen ID ...
    python -m studio feedback edit ID "the right answer"
    python -m studio feedback add --run RUN --input TEXT --answer TEXT --verdict down [--correction TEXT]
    python -m studio feedback make-dataset RUN NAME [--replace]   # NAME, NAME_pref, NAME_kto in WORKSPACE/data
    python -m studio feedback export FILE.csv|FILE.jsonl [--run RUN]
    python -m studio feedback improve RUN [--name NEW] [--method auto|sft|dpo]   # train runs/NEW from the feedback
    python -m studio feedback compare NEW [--json]   # old vs improved run: held-out rows and feedback rows
    python -m studio feedback verdict NEW [--json]   # the gate: old vs improved on the frozen check set
    python -m studio feedback promote NEW [--anyway] # teammates (the shared demo) get NEW; after its verdict
    python -m studio feedback rollback RUN           # teammates get the version before the live one back
    python -m studio feedback versions               # each shared line: its versions, the live one, who did what
    python -m studio feedback agreement --run RUN    # rows labelled by two or more people: count, kappa per pair
    python -m studio feedback queue RUN FILE [--n 10]  # the rows of FILE the run is least sure about

The database is WORKSPACE/feedback.sqlite3 (studio/feedback/store.py), shared with the studio and demo pages.
"""
from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import sys
from pathlib import Path

from ..errors import StudioError
from ..feedback.datasets import conflict_lines, export_rows, make_datasets, run_prompt_shape
from ..feedback.store import FeedbackStore
from ..runs.run_dir import RunDir
from ..workspace import safe_name
from . import feedback_gate as gate_verbs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", default="workspace", help="the studio's folder (holds feedback.sqlite3)")
    parser.add_argument("--as", dest="login", default=None, help="who is acting (default: this machine's user)")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    ls = sub.add_parser("list", help="feedback rows, oldest first")
    ls.add_argument("--run")
    ls.add_argument("--status", choices=["new", "accepted", "dropped"])
    ls.add_argument("--login", dest="who", help="only this login's rows")
    ls.add_argument("--label", help="rows whose answer or correction is this label")
    sub.add_parser("summary", help="counts and conflicts").add_argument("--run")
    for verb, what in (("accept", "accepted"), ("drop", "dropped"), ("reopen", "new")):
        sp = sub.add_parser(verb, help=f"mark rows {what}")
        sp.add_argument("ids", nargs="+", type=int, metavar="ID")
    ed = sub.add_parser("edit", help="replace a row's correction (the owner's edit; the teammate's stays recorded)")
    ed.add_argument("id", type=int)
    ed.add_argument("text")
    add = sub.add_parser("add", help="record feedback as this login (scripts, tests)")
    add.add_argument("--run", required=True)
    add.add_argument("--input", required=True)
    add.add_argument("--answer", default="")
    add.add_argument("--verdict", required=True, choices=["up", "down"])
    add.add_argument("--correction")
    mk = sub.add_parser("make-dataset", help="accepted rows -> NAME (alpaca), NAME_pref (ranking), NAME_kto")
    mk.add_argument("run")
    mk.add_argument("name")
    mk.add_argument("--replace", action="store_true", help="replace datasets of the same names")
    ex = sub.add_parser("export", help="rows as CSV (formula cells neutralised) or JSONL")
    ex.add_argument("file")
    ex.add_argument("--run")
    im = sub.add_parser("improve", help="train a new run from RUN's adapter and its accepted feedback")
    im.add_argument("run")
    im.add_argument("--name", default=None, help="the new run's folder name (default: RUN-improved)")
    im.add_argument("--method", choices=["auto", "sft", "dpo"], default="auto",
                    help="auto (default): SFT on corrections + replay for a labels run, DPO on (correction, answer) "
                         "pairs for an instruction or chat run that has them")
    im.add_argument("--quiet", action="store_true", help="print only the final summary")
    cp = sub.add_parser("compare", help="the improved run beside the run it came from")
    cp.add_argument("run", help="the improved run (its folder holds improved_from.json)")
    cp.add_argument("--json", action="store_true", help="print one JSON object on stdout, nothing else")
    vd = sub.add_parser("verdict", help="the improved run and its old run on the frozen check set (the gate)")
    vd.add_argument("run", help="the improved run")
    vd.add_argument("--json", action="store_true", help="print one JSON object on stdout, nothing else")
    pr = sub.add_parser("promote", help="teammates (the shared demo of its line) get this improved run")
    pr.add_argument("run")
    pr.add_argument("--anyway", action="store_true", help="promote although the verdict says it got worse")
    rb = sub.add_parser("rollback", help="teammates get the version before the live one back")
    rb.add_argument("run", help="any run of the line")
    sub.add_parser("versions", help="each shared line: its versions and the live one")
    ag = sub.add_parser("agreement", help="agreement between teammates who labelled the same rows")
    ag.add_argument("--run", required=True)
    qu = sub.add_parser("queue", help="the rows of a file of texts the run is least sure about")
    qu.add_argument("run")
    qu.add_argument("file")
    qu.add_argument("--n", type=int, default=10, help="how many rows (1-50)")


def _correction(workspace: Path, run: str, text: str | None) -> str | None:
    """A correction as the page takes it: on a labels run one of its labels, spelled as the run spells it."""
    # start-up: 0.13 s at import (evaluation's label rule); `studio feedback --help` and `list` never need it
    from ..app.feedback_intake import correction_for
    return correction_for(workspace / "runs" / safe_name(run, code="name.run"), text)


def _line(r: object) -> str:
    d = r.to_dict()  # type: ignore[attr-defined]
    fixed = d["edited"] if d["edited"] is not None else d["correction"]
    return (f"{d['id']:>5}  {d['status']:<8} {d['verdict']:<4} {d['login']:<12} {d['run']:<16} "
            f"{json.dumps(d['input'][:60], ensure_ascii=False)} -> {json.dumps(d['answer'][:30], ensure_ascii=False)}"
            + (f" => {json.dumps(fixed[:40], ensure_ascii=False)}" if fixed else ""))


def main(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace).expanduser().resolve()
    store = FeedbackStore.in_workspace(workspace)
    me = args.login or getpass.getuser()
    action = getattr(args, "action", None) or "list"
    if action == "list":  # every matching row, streamed
        for r in store.iter_rows(run=getattr(args, "run", None), status=getattr(args, "status", None),
                                 login=getattr(args, "who", None), label=getattr(args, "label", None)):
            print(_line(r))
        return 0
    if action == "summary":  # counted in the database
        if not args.run:
            for name in store.runs():
                print(json.dumps({"run": name, **store.summary(name)}, ensure_ascii=False))
            return 0
        print(json.dumps(store.summary(args.run), ensure_ascii=False, indent=1))
        for line in conflict_lines(store, args.run, limit=1000):
            print(f"conflict: {line}")
        return 0
    if action in ("accept", "drop", "reopen"):
        status = {"accept": "accepted", "drop": "dropped", "reopen": "new"}[action]
        for fid in args.ids:
            store.review(fid, reviewer=me, status=status)
        print(f"{len(args.ids)} row(s) {status}")
        return 0
    if action == "edit":  # on a labels run, one of its labels (as the page's edit)
        row = store.get(args.id)
        if row is None:
            raise StudioError.of("feedback.missing", id=args.id)
        store.review(args.id, reviewer=me, edited=_correction(workspace, row.run, args.text))
        print(f"row {args.id} edited")
        return 0
    if action == "add":
        run = safe_name(args.run, code="name.run")
        fix = _correction(workspace, run, args.correction)  # a labels run takes its labels only
        fid = store.add(run=run, login=me, input=args.input, answer=args.answer, verdict=args.verdict,
                        correction=fix, source="cli")
        print(fid)
        return 0
    if action == "make-dataset":
        run = safe_name(args.run, code="name.run")
        run_dir = workspace / "runs" / run
        if not run_dir.is_dir():
            raise StudioError.of("cli.feedback_run", run=run, runs=workspace / "runs")
        made = make_datasets(store, run, workspace / "data", args.name, like=run_prompt_shape(run_dir),
                             replace=args.replace)
        for kind in ("sft", "ranking", "kto"):
            if kind in made:
                print(f"{made[kind]['name']}: {made[kind]['rows']} rows ({kind}) -> {made[kind]['path']}")
        if made["skipped"]:
            print(f"{made['skipped']} accepted row(s) left out: their input has conflicting corrections "
                  "(python -m studio feedback summary --run {run})".replace("{run}", run))
        return 0
    if action == "export":
        path = export_rows(store.iter_rows(run=args.run), Path(args.file))
        print(path)
        return 0
    if action == "improve":
        return _improve(workspace, args)
    if action == "compare":
        return _compare(workspace, args)
    if action in ("verdict", "promote", "rollback", "versions", "agreement", "queue"):
        return gate_verbs.run(action, workspace, store, me, args)
    raise StudioError.of("cli.feedback_action", action=action,
                         actions="list, summary, accept, drop, reopen, edit, add, make-dataset, export, improve, "
                                 "compare, verdict, promote, rollback, versions, agreement", last="queue")


def _improve(workspace: Path, args: argparse.Namespace) -> int:
    """Prepare the improving run, then train it in this process as ``python -m studio train`` does."""
    # start-up: 0.1 s each at import (the scoring services, the engine); `studio feedback --help` never needs them
    from ..app.improve import prepare
    from .train import EXIT, _print_progress_from_events, _stop
    cfg = prepare(workspace, args.run, args.name, args.method)
    gate_verbs.warn_before(workspace, args.run, args.method)  # prepared, not trained: said before it starts
    lineage = getattr(cfg, "lineage", {})
    print(f"improving {lineage.get('run')} into {Path(cfg.output_dir).name}: {lineage.get('feedback_rows')} "
          f"feedback rows, method {cfg.stage}" + "".join(f"; {n}" for n in (cfg.notices or [])), file=sys.stderr)
    follower = None if args.quiet else _print_progress_from_events(cfg)
    # start-up: 0.08 s at import; `studio feedback --help` never needs it
    from ..engine import run_training
    try:
        summary = run_training(cfg)
    except StudioError:
        raise
    except Exception as exc:  # the run's own status names why; the user sees that line, not a traceback
        _stop(follower)
        print(f"Error: {RunDir(cfg.output_dir).read_status().get('reason') or exc}", file=sys.stderr)
        return 1
    finally:
        _stop(follower)
    print(json.dumps({"run": Path(cfg.output_dir).name, **{k: summary[k] for k in ("state", "step", "final_loss")
                                                            if k in summary}}))
    if summary.get("state") == "finished":
        gate_verbs.judge_and_print(workspace, Path(cfg.output_dir).name, quiet=args.quiet)
    return EXIT.get(summary.get("state", ""), 1)


def _compare(workspace: Path, args: argparse.Namespace) -> int:
    # start-up: 0.1 s at import (the scoring services); `studio feedback --help` never needs it
    from ..app.improve import compare, workspace_run
    real_stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):  # library chatter never mixes with the JSON
        result = compare(workspace_run(workspace, args.run))  # "There is no run X" before "X was not improved"
    if args.json:
        real_stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        return 0
    info = result["lineage"]
    print(f"{result['new_run']}: improved from {result['old_run']} with {info.get('feedback_rows')} feedback rows "
          f"({info.get('method')})")
    names = {"held_out": f"held-out rows of {result['old_run']}", "feedback": "feedback rows"}
    for key, side in result["sets"].items():
        print(f"\n{names[key]} (n={side['old']['n']})")
        print(f"{'':<16}{'before':>10}{'after':>10}{'change':>10}")
        print(f"{'accuracy':<16}{side['old']['accuracy']:>10.3f}{side['new']['accuracy']:>10.3f}"
              f"{side['delta']['accuracy']:>+10.3f}")
        for lab, change in side["delta"].get("per_class", {}).items():
            print(f"{'F1 ' + lab:<16}{side['old']['per_class'][lab]['f1']:>10.3f}"
                  f"{side['new']['per_class'][lab]['f1']:>10.3f}{change:>+10.3f}")
    return 0
