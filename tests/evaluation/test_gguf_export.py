"""GGUF export: the file reloads (transformers' GGUF reader) as the trained model, its embedded chat template renders
the training prompt token for token, and its Modelfile says the same format to Ollama.

Runs: the shared tiny llama LoRA run (studio template), a tiny random Qwen2 with a LoRA run (qwen template: chatml
markers and a default system prompt), a tiny-demo run (its base and tokenizer built in the run folder, Chinese rows),
and a tiny random Gemma 3 folder (its norm offset).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from studio.errors import StudioError

from tests.conftest import make_review_rows, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
F16_LOGIT_TOL = 0.02  # the trained logits here span about +-10; F16 weights moved them by 5e-4..5e-3 (measured)


def _byte_tokenizer_model(folder: Path, rows: list[dict], extra_special: list[str]) -> "object":
    """A byte-level BPE tokenizer fitted to ``rows`` (the tiny-demo builder's), with extra special tokens."""
    from transformers import AutoTokenizer
    from studio.models.loading import build_tiny_llama, demo_texts
    build_tiny_llama(folder / "tok", demo_texts(rows), hidden=32, layers=1, heads=2, vocab_size=400, seed=0)
    tok = AutoTokenizer.from_pretrained(folder / "tok")
    if extra_special:
        tok.add_special_tokens({"additional_special_tokens": extra_special})
    return tok


@pytest.fixture(scope="module")
def qwen_run(tmp_path_factory, runs):
    """A random 2-layer Qwen2 (grouped KV heads, q/k/v biases, untied head) and a LoRA run on it (template qwen)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    root = tmp_path_factory.mktemp("qwen")
    tok = _byte_tokenizer_model(root, runs["heldout"] + make_review_rows(80), ["<|im_start|>", "<|im_end|>",
                                                                              "<|endoftext|>"])
    tok.eos_token, tok.pad_token = "<|im_end|>", "<|endoftext|>"
    config = Qwen2Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         tie_word_embeddings=False, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.1)
            elif p.dim() == 1 and not torch.all(p == 1):
                p.normal_(0.0, 0.1)  # the q/k/v biases: non-zero, so a dropped bias shows
    base = root / "qwen2-base"
    model.save_pretrained(base)
    tok.save_pretrained(base)
    run = root / "runs" / "qwen-lora"
    run_training(RunConfig(model_name_or_path=str(base), dataset=str(runs["data"]), output_dir=str(run),
                           template="qwen", finetuning_type="lora", lora_rank=8, lora_alpha=16, max_steps=40,
                           learning_rate=1e-2, per_device_train_batch_size=16, val_size=0.2, logging_steps=10,
                           save_steps=1000, plot_loss=False, lr_scheduler_type="constant", seed=0))
    return run


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """A short tiny-demo run: base and tokenizer (each Chinese character its own piece) built inside the run."""
    from studio.config.run_config import RunConfig
    from studio.engine import run_training
    root = tmp_path_factory.mktemp("demo")
    data = write_jsonl(root / "reviews.jsonl", make_review_rows(120, seed=3))
    run = root / "runs" / "demo"
    run_training(RunConfig(model_name_or_path="tiny-demo", dataset=str(data), output_dir=str(run),
                           finetuning_type="full", max_steps=20, learning_rate=3e-3, per_device_train_batch_size=16,
                           val_size=0.25, logging_steps=10, save_steps=1000, plot_loss=False, seed=0))
    return run


def _heldout(run: Path) -> list[dict]:
    from studio.evaluation.evaluate import validation_rows
    return validation_rows(str(run))


@pytest.fixture(scope="module")
def exports(tmp_path_factory, runs, qwen_run):
    """Each run exported once per type: {(name, type): (run, folder, info)}."""
    from studio.evaluation.gguf_export import gguf_export
    root = tmp_path_factory.mktemp("gguf")
    out = {}
    for name, run in (("llama", runs["lora"]), ("qwen2", qwen_run)):
        for gtype in ("f16", "q8_0"):
            folder = root / f"{name}-{gtype}"
            out[(name, gtype)] = (run, folder, gguf_export(run, folder, gtype))
    return out


@pytest.mark.parametrize("name", ["llama", "qwen2"])
@pytest.mark.parametrize("gtype", ["f16", "q8_0"])
def test_gguf_reloads_as_the_trained_model(exports, runs, name, gtype):
    from studio.evaluation.gguf_agreement import agreement
    run, folder, info = exports[(name, gtype)]
    assert info["architecture"] == name and info["files"] == ["Modelfile", "README.md", "model.gguf",
                                                              "studio_export.json"]
    assert not list(folder.parent.glob(f".{folder.name}.tmp-*")) and not list(folder.parent.glob(".gguf-merge-*"))
    rows = runs["heldout"]
    r = agreement(run, folder, rows)
    assert r["prompt_text_match"] == 1.0 and r["prompt_token_match"] == 1.0, r
    if gtype == "f16":
        assert r["max_abs_logit_diff"] < F16_LOGIT_TOL, r
        assert r["next_token_argmax_agree"] == 1.0 and r["label_agree"] == 1.0, r
    else:
        assert r["label_agree"] >= 0.98, r
        assert r["max_abs_logit_diff"] < 0.2, r  # Q8_0 rounds each weight to 1/254 of its block range: 0.02-0.03 here
    assert r["accuracy_gguf"] == pytest.approx(r["accuracy_trained"], abs=0.04)


def test_the_export_holds_the_trained_weights_not_the_base(exports, runs):
    """The LoRA adapter was merged: the GGUF differs from the untrained base as much as the trained model does."""
    import torch
    from transformers import AutoModelForCausalLM
    from studio.evaluation.gguf_agreement import load_gguf
    from studio.models.loading import load_for_inference
    run, folder, _ = exports[("llama", "f16")]
    gguf_model, _ = load_gguf(folder)
    trained, _, _ = load_for_inference(run)
    base = AutoModelForCausalLM.from_pretrained(runs["base"]).eval()
    ids = torch.tensor([[1, 5, 9, 17, 33, 65, 100, 120]])
    with torch.no_grad():
        g, t, b = gguf_model(input_ids=ids).logits, trained(input_ids=ids).logits, base(input_ids=ids).logits
    assert (g - t).abs().max() < F16_LOGIT_TOL < (g - b).abs().max()


def test_embedded_chat_template_is_the_training_format(exports):
    """System prompts, the default system prompt and multi-turn history render as the Template does."""
    from transformers import AutoTokenizer
    from studio.data.templates import get_template
    from studio.models.loading import load_for_inference
    run, folder, info = exports[("qwen2", "f16")]
    _, tok, cfg = load_for_inference(run)
    tpl = get_template(cfg.template, tok)
    g_tok = AutoTokenizer.from_pretrained(folder, gguf_file="model.gguf")
    assert g_tok.chat_template == info["chat_template"]
    convs = [[{"role": "user", "content": "Is it good?"}],
             [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "好吗?"}],
             [{"role": "user", "content": "a"}, {"role": "assistant", "content": "positive"},
              {"role": "user", "content": "b\nc"}]]
    for msgs in convs:
        text = g_tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        assert text == tpl.chat_prompt(msgs)
        assert g_tok(text)["input_ids"] == tok(text, add_special_tokens=False)["input_ids"]
    assert "You are Qwen" in tpl.chat_prompt(convs[0])  # the default system prompt is part of it
    whole = convs[2] + [{"role": "assistant", "content": "negative"}]
    assert g_tok.apply_chat_template(whole, tokenize=False) == tpl.render(whole)


def test_tiny_demo_run_exports_with_its_own_base_and_chinese_rows(demo_run, tmp_path):
    from studio.evaluation.gguf_agreement import agreement
    from studio.evaluation.gguf_export import gguf_export
    info = gguf_export(demo_run, tmp_path / "g", "f16")
    assert info["architecture"] == "llama" and info["template_name"] == "studio"
    rows = _heldout(demo_run)
    assert any(re.search(r"[\u4e00-\u9fff]", r["input"]) for r in rows)
    r = agreement(demo_run, tmp_path / "g", rows)
    assert r["prompt_token_match"] == 1.0 and r["max_abs_logit_diff"] < F16_LOGIT_TOL, r


def test_gemma3_folder_exports_with_its_norm_offset(tmp_path, runs):
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    from studio.evaluation.gguf_agreement import load_gguf
    from studio.evaluation.gguf_export import gguf_export
    tok = _byte_tokenizer_model(tmp_path, runs["heldout"], [])

    def build(folder: Path, scalar: int) -> object:
        # head_dim 256 as Gemma 3's: llama.cpp (and transformers reading a GGUF) scale queries by 1/sqrt(head_dim)
        cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                               num_attention_heads=2, num_key_value_heads=1, head_dim=256, sliding_window=16,
                               max_position_embeddings=256, query_pre_attn_scalar=scalar)
        torch.manual_seed(0)
        model = Gemma3ForCausalLM(cfg).eval()
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.normal_(0.0, 0.3 if "norm" in n else 0.1)  # norm weights away from 0: the +1 offset matters
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        return model

    build(tmp_path / "odd-gemma", 64)  # a query scale no GGUF key carries: refused, not exported as another model
    with pytest.raises(StudioError, match="query_pre_attn_scalar: trained 64, GGUF 256"):
        gguf_export(tmp_path / "odd-gemma", tmp_path / "g", "f16")
    model = build(tmp_path / "gemma", 256)
    info = gguf_export(tmp_path / "gemma", tmp_path / "g", "f16")
    assert info["architecture"] == "gemma3"
    back, _ = load_gguf(tmp_path / "g")
    ids = torch.tensor([list(range(3, 40))])  # longer than the sliding window
    with torch.no_grad():
        assert (back(input_ids=ids).logits - model(input_ids=ids).logits).abs().max() < F16_LOGIT_TOL


def _go_render(template: str, cases: list[dict], tmp: Path) -> list[str] | None:
    """The Go text/template rendering of ``template`` (what Ollama does), or None without a Go toolchain."""
    go = shutil.which("go")
    if go is None:
        return None
    (tmp / "t.tmpl").write_text(template, encoding="utf-8")
    (tmp / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    env = {**os.environ, "GOCACHE": str(tmp / "gocache"), "GOPATH": str(tmp / "gopath"), "GOFLAGS": "-mod=mod",
           "GO111MODULE": "off"}
    res = subprocess.run([go, "run", str(ROOT / "tests/fixtures/ollama/render.go"), str(tmp / "t.tmpl"),
                          str(tmp / "cases.json")], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_modelfile_says_the_training_format_to_ollama(exports, name, tmp_path):
    from studio.data.templates import get_template
    from studio.models.loading import load_for_inference
    run, folder, _ = exports[(name, "q8_0")]
    text = (folder / "Modelfile").read_text(encoding="utf-8")
    assert text.count("FROM ./model.gguf") == 1
    assert "PARAMETER temperature 0.0" in text and "PARAMETER num_predict 16" in text  # a label run: greedy, short
    _, tok, cfg = load_for_inference(run)
    tpl = get_template(cfg.template, tok)
    stops = re.findall(r'^PARAMETER stop "(.*)"$', text, re.M)
    assert (stops[0] == "<|im_end|>") if name == "qwen2" else (stops[0] == "</s>" and "### Instruction:" in stops)
    system = re.search(r'^SYSTEM "(.*)"$', text, re.M)
    assert (system is not None) == (name == "qwen2")
    template = re.search(r'TEMPLATE """(.*?)"""', text, re.S).group(1)
    convs = [[{"role": "user", "content": "Is it good?"}],
             [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "x"},
              {"role": "assistant", "content": "positive"}, {"role": "user", "content": "y\nz"}]]
    default = json.loads('"' + system.group(1) + '"') if system else ""
    # Ollama's values: .System is the request's system message, else the Modelfile's SYSTEM; .Messages lists all
    cases = [{"system": next((m["content"] for m in c if m["role"] == "system"), default), "messages":
              c if any(m["role"] == "system" for m in c) or not default else [{"role": "system", "content": default}]
              + c} for c in convs]
    rendered = _go_render(template, cases, tmp_path)
    if rendered is None:
        pytest.skip("no Go toolchain (apt-get install golang-go) to render the Modelfile's TEMPLATE as Ollama does")
    assert rendered == [tpl.chat_prompt(c) for c in convs]


def test_gguf_export_errors_are_studio_errors(runs, tmp_path):
    from studio.evaluation.gguf_export import gguf_export
    with pytest.raises(StudioError, match="Unknown GGUF type 'q5_1'"):
        gguf_export(runs["lora"], tmp_path / "a", "q5_1")  # type: ignore[arg-type]
    with pytest.raises(StudioError, match="q4_k_m cannot be written here") as exc:
        gguf_export(runs["lora"], tmp_path / "a", "q4_k_m")
    assert "llama-quantize" in exc.value.fix
    unfinished = tmp_path / "runs" / "unfinished"
    unfinished.mkdir(parents=True)
    shutil.copy(Path(runs["lora"]) / "config.yaml", unfinished / "config.yaml")
    with pytest.raises(StudioError, match="no finished model"):
        gguf_export(unfinished, tmp_path / "b", "f16")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    with pytest.raises(StudioError, match="not made by an export"):
        gguf_export(runs["lora"], tmp_path / "taken", "f16")
    assert (tmp_path / "taken" / "mine.txt").read_text() == "keep"
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_chat_template_ollama_cannot_say_is_refused_unless_the_modelfile_is_skipped(runs, tmp_path):
    """template: auto with the tokenizer's own Jinja program that matches no built-in format."""
    from studio.evaluation.gguf_export import gguf_export
    from studio.models.loading import load_tokenizer
    folder = tmp_path / "odd"
    shutil.copytree(runs["base"], folder)
    tok = load_tokenizer(str(folder))
    tok.chat_template = "{% for m in messages %}{{ m['role'] | upper }}>> {{ m['content'] }}\n{% endfor %}BOT>>"
    tok.save_pretrained(folder)
    with pytest.raises(StudioError, match="cannot be written as an Ollama Modelfile") as exc:
        gguf_export(folder, tmp_path / "g", "f16")
    assert "without the Modelfile" in exc.value.fix and not (tmp_path / "g").exists()
    info = gguf_export(folder, tmp_path / "g", "f16", modelfile=False)
    assert "Modelfile" not in info["files"] and info["chat_template"] == tok.chat_template
    with pytest.raises(StudioError, match="already exists"):
        gguf_export(folder, tmp_path / "g", "f16", modelfile=False)
    again = gguf_export(folder, tmp_path / "g", "q8_0", modelfile=False, overwrite=True)  # an earlier export
    assert again["gguf_type"] == "q8_0"


def test_cli_exports_gguf_and_refuses_mixed_flags(runs, tmp_path):
    from tests.helpers import run_cli
    out = tmp_path / "cli"
    res = run_cli("export", str(runs["lora"]), "--gguf", "q8_0", "--out", str(out))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Exported a GGUF q8_0 model (llama)" in res.stdout and "ollama create" in res.stdout
    assert (out / "model.gguf").is_file() and (out / "Modelfile").is_file()
    res = run_cli("export", str(runs["lora"]), "--gguf", "f16", "--merge", "--out", str(tmp_path / "x"))
    assert res.returncode == 2 and "cannot be combined" in res.stderr
    res = run_cli("export", str(runs["lora"]), "--gguf", "q4_k_m", "--out", str(tmp_path / "y"))
    assert res.returncode == 2 and "llama-quantize" in res.stderr


def test_export_panel_writes_gguf_and_hides_merge_for_it(runs, tmp_path):
    from studio.ui import evaluate_tab as tab
    exports = tmp_path / "exports"
    text, folder = tab.on_export(str(runs["lora"]), True, False, "", exports, "en", "q8_0")
    assert folder == str((exports / "lora-gguf-q8_0").resolve()) and "GGUF Q8_0" in text and "ollama create" in text
    assert (exports / "lora-gguf-q8_0" / "model.gguf").is_file()
    zh, _ = tab.on_export(str(runs["lora"]), True, True, "", exports, "zh", "q8_0")
    assert "已把 **GGUF Q8_0** 模型导出到" in zh
    import io
    import zipfile
    from studio.app.downloads import stream_zip
    assert 'download="lora-gguf-q8_0.gguf"' in tab.export_links(folder, exports)  # the file itself, and the zip
    with zipfile.ZipFile(io.BytesIO(b"".join(stream_zip(folder)))) as zf:
        assert "lora-gguf-q8_0/model.gguf" in zf.namelist() and "lora-gguf-q8_0/Modelfile" in zf.namelist()
    assert tab.merge_visible(str(runs["lora"]), "folder")["visible"] is True
    assert tab.merge_visible(str(runs["lora"]), "f16")["visible"] is False
    with pytest.raises(Exception, match="Unknown export format 'q4_0'"):
        tab.on_export(str(runs["lora"]), True, False, "", exports, "en", "q4_0")


SMOLLM2_OWN = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
               "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}"
               "{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
               "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def test_an_auto_chat_template_like_smollm2s_own_gets_a_modelfile(runs, tmp_path):
    """SmolLM2's own template (its GGUF's) is chatml with a default system prompt LLaMA-Factory's smollm2 spells
    with a full stop: the Modelfile is chatml's, with the tokenizer's own default as SYSTEM."""
    from studio.data.templates import ChatTemplate
    from studio.evaluation.modelfile import expressible_template, go_template, modelfile_text
    from studio.models.loading import load_tokenizer
    tok = load_tokenizer(str(runs["base"]))
    tok.chat_template = SMOLLM2_OWN
    own = ChatTemplate(tok)
    form = expressible_template(own)
    assert form.name == "chatml" and form.default_system.endswith("trained by Hugging Face")
    text = modelfile_text(own, {"temperature": 0.2}, eos_text=tok.eos_token)
    assert 'SYSTEM "You are a helpful AI assistant named SmolLM, trained by Hugging Face"' in text
    convs = [[{"role": "user", "content": "Hi"}],
             [{"role": "system", "content": "S"}, {"role": "user", "content": "a"}]]
    cases = [{"system": form.default_system, "messages": [{"role": "system", "content": form.default_system}]
              + convs[0]}, {"system": "S", "messages": convs[1]}]
    rendered = _go_render(go_template(form), cases, tmp_path)
    if rendered is None:
        pytest.skip("no Go toolchain to render the TEMPLATE as Ollama does")
    assert rendered == [own.chat_prompt(c) for c in convs]


def test_a_model_prepared_from_a_gguf_keeps_that_files_vocabulary(tmp_path):
    """The built-in models come from GGUF files: their tokenizer arrays are copied from the source file (what
    llama.cpp read before), with no BOS added on top of the template's own."""
    import torch
    from gguf import GGUFReader
    from studio.evaluation.gguf_agreement import load_gguf
    from studio.evaluation.gguf_export import gguf_export
    from studio.models.gguf_import import prepare_gguf
    from tests.models.test_gguf_import import write_tiny_llama_gguf
    src = tmp_path / "tiny.gguf"
    write_tiny_llama_gguf(src)
    folder = prepare_gguf(src, tmp_path / "models", progress=lambda f, m: None)
    info = gguf_export(folder, tmp_path / "g", "f16")
    assert info["tokenizer_from"] == "copied from tiny.gguf"
    fields = GGUFReader(str(tmp_path / "g" / "model.gguf")).fields
    old = GGUFReader(str(src)).fields
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.pre"):
        assert fields[key].contents() == old[key].contents(), key
    assert fields["tokenizer.ggml.add_bos_token"].contents() is False
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    back, _ = load_gguf(tmp_path / "g")
    ids = torch.tensor([[0, 3, 5, 7, 11, 13]])
    with torch.no_grad():
        assert (back(input_ids=ids).logits - model(input_ids=ids).logits).abs().max() < F16_LOGIT_TOL
