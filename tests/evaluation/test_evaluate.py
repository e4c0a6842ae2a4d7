"""Evaluation: metrics by hand, label parsing, the learned model beats its base, generation, batch CSV."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest


from studio.errors import StudioError
from studio.evaluation.metrics import classification_metrics, label_set, parse_label



def test_classification_metrics_hand_computed() -> None:
    labels = ["negative", "neutral", "positive"]
    y_true = ["positive", "positive", "positive", "negative", "negative", "neutral"]
    y_pred = ["positive", "negative", None, "negative", "positive", "neutral"]
    m = classification_metrics(y_true, y_pred, labels)
    assert m["n"] == 6 and m["unparseable"] == 1
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["confusion"]["labels"] == labels
    assert m["confusion"]["matrix"] == [[1, 0, 1], [0, 1, 0], [1, 0, 1]]
    assert m["confusion"]["unparseable"] == [0, 0, 1]
    neg, neu, pos = (m["per_class"][k] for k in labels)
    assert (neg["precision"], neg["recall"], neg["f1"], neg["support"]) == pytest.approx((0.5, 0.5, 0.5, 2))
    assert (neu["precision"], neu["recall"], neu["f1"], neu["support"]) == pytest.approx((1.0, 1.0, 1.0, 1))
    # positive: 1 of 2 "positive" answers right; 1 of 3 positives found (the unparseable one is a miss)
    assert (pos["precision"], pos["recall"], pos["f1"], pos["support"]) == pytest.approx((0.5, 1 / 3, 0.4, 3))
    assert m["macro_f1"] == pytest.approx((0.5 + 1.0 + 0.4) / 3)


def test_classification_metrics_class_never_predicted_has_zero_precision() -> None:
    m = classification_metrics(["a", "b"], ["a", "a"], ["a", "b"])
    assert m["per_class"]["b"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert m["per_class"]["a"]["precision"] == 0.5


@pytest.mark.parametrize("answer,expected", [
    ("positive", "positive"), ("Positive.", "positive"), ("  NEGATIVE!\n", "negative"), ("pos", "positive"),
    ("neg", "negative"), ("积极", "positive"), ("正面", "positive"), ("好评！", "positive"),
    ("差评", "negative"),
    ("消极。", "negative"), ("The review is positive.", "positive"), ("Negative. It broke.", "negative"),
    ("ＰＯＳＩＴＩＶＥ", "positive"),  # full-width letters
    ("I cannot tell", None), ("", None), ("positively", None),  # no label as a whole word
    ("it is positive, not negative", None),  # names both labels, neither first: ambiguous
])
def test_parse_label_english_labels(answer: str, expected: str | None) -> None:
    assert parse_label(answer, ["negative", "positive"]) == expected


def test_parse_label_uses_the_data_labels_and_neutral() -> None:
    zh = ["积极", "消极"]
    assert parse_label("positive", zh) == "积极"
    assert parse_label("负面评价", zh) == "消极"
    three = ["negative", "neutral", "positive"]
    assert parse_label("中性", three) == "neutral"
    assert parse_label("Neutral", three) == "neutral"
    assert parse_label("中性", ["negative", "positive"]) is None  # neutral is not a label here


def test_label_set_rejects_single_label_and_free_text() -> None:
    assert label_set(["Positive", "positive.", "negative"]) == ["negative", "Positive"]
    with pytest.raises(StudioError) as e:
        label_set(["positive", "positive"])
    assert e.value.message == ("The data has 1 distinct label(s); a sentiment check needs at least 2. "
                               "Fix: use rows whose output is the label, e.g. positive / negative.")
    with pytest.raises(StudioError, match="25 distinct outputs"):
        label_set([f"answer {i}" for i in range(25)])


def test_unparseable_answers_count_as_wrong(runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    import studio.evaluation.evaluate as ev
    from studio.models.loading import load_for_inference
    from studio.data.templates import get_template
    model, tok, _ = load_for_inference(runs["full"])
    rows = [{"instruction": "x", "input": str(i), "output": lab} for i, lab in
            enumerate(["positive", "negative", "positive", "negative"])]
    canned = ["Positive!", "no idea", "negative", "NEG."]
    # generate mode answers every row in one batched call (evaluate._generate_rows)
    monkeypatch.setattr(ev, "_generate_rows", lambda model, tok, template, rows, budget: canned[:len(rows)])
    r = ev.sentiment_eval(model, tok, get_template("studio"), rows, mode="generate")
    assert r["n"] == 4 and r["unparseable"] == 1
    assert r["accuracy"] == pytest.approx(0.5)
    assert r["per_class"]["negative"]["recall"] == pytest.approx(0.5)
    wrong = {m["input"]: m for m in r["misclassified"]}
    assert set(wrong) == {"1", "2"}
    assert wrong["1"]["parsed"] == "(unparseable)" and wrong["1"]["answer"] == "no idea"
    assert wrong["2"]["parsed"] == "negative"


def test_trained_model_beats_untrained_base(runs: dict) -> None:
    from studio.evaluation.evaluate import compare_base_vs_tuned
    card = compare_base_vs_tuned(runs["lora"], runs["heldout"])  # base = the same model, adapter off
    assert card["n"] == len(runs["heldout"]) == 30
    assert card["tuned"]["accuracy"] >= 0.9
    assert card["tuned"]["accuracy"] >= card["base"]["accuracy"] + 0.3
    assert card["delta"]["accuracy"] == pytest.approx(card["tuned"]["accuracy"] - card["base"]["accuracy"])
    assert card["tuned"]["unparseable"] == 0  # score mode always yields a label
    assert card["tuned"]["latency_ms_per_row"] > 0


def test_full_finetune_scorecard_loads_the_base_separately(runs: dict) -> None:
    from studio.evaluation.evaluate import compare_base_vs_tuned
    card = compare_base_vs_tuned(runs["full"], runs["heldout"])
    assert card["tuned"]["accuracy"] >= card["base"]["accuracy"] + 0.3


def test_generate_mode_agrees_with_score_mode_on_a_learned_model(runs: dict) -> None:
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import sentiment_eval
    from studio.models.loading import load_for_inference
    model, tok, cfg = load_for_inference(runs["full"])
    r = sentiment_eval(model, tok, get_template(cfg.template, tok), runs["heldout"], mode="generate")
    assert r["accuracy"] >= 0.9
    assert set(r["per_class"]) == {"negative", "positive"}
    assert sum(r["per_class"][k]["support"] for k in r["per_class"]) == r["n"] == 30


def test_validation_rows_match_the_engine_split(runs: dict) -> None:
    from studio.evaluation.evaluate import load_rows, validation_rows
    from studio.runs.run_dir import RunDir
    val = validation_rows(runs["full"])
    assert len(val) == RunDir(runs["full"]).read_status()["val_rows"] == 32
    assert all(r in load_rows(runs["data"]) for r in val)


def test_generate_streams_the_same_text_as_a_plain_call(runs: dict) -> None:
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import chat, generate
    from studio.models.loading import load_for_inference
    model, tok, _ = load_for_inference(runs["full"])
    tpl = get_template("studio")
    row = runs["heldout"][0]
    plain = generate(model, tok, tpl, row["instruction"], row["input"], max_new_tokens=6)
    chunks = list(generate(model, tok, tpl, row["instruction"], row["input"], max_new_tokens=6, stream=True))
    assert chunks and chunks[-1] == plain == row["output"]
    # chat: history in gr.Chatbot's message format; a tiny context forces dropping old turns
    history = [{"role": "user", "content": [{"type": "text", "text": "hello " * 40}]},
               {"role": "assistant", "content": "hi"}]
    reply = chat(model, tok, tpl, history, f"{row['instruction']}\n{row['input']}", max_new_tokens=6,
                 temperature=0.0, max_context=60)
    assert reply == row["output"]


def test_batch_predict_writes_a_csv_with_predictions(runs: dict, tmp_path: Path) -> None:
    from studio.data.templates import get_template
    from studio.evaluation.evaluate import batch_predict, sentiment_eval
    from studio.models.loading import load_for_inference
    model, tok, _ = load_for_inference(runs["full"])
    tpl = get_template("studio")
    out = tmp_path / "pred.csv"
    info = batch_predict(model, tok, tpl, runs["heldout_file"], out, labels=["negative", "positive"])
    with open(out, encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == info["n"] == 30
    assert list(table[0]) == ["instruction", "input", "output", "prediction", "correct"]
    expected = sentiment_eval(model, tok, tpl, runs["heldout"])["accuracy"]
    assert info["accuracy"] == pytest.approx(expected)
    assert sum(r["correct"] == "yes" for r in table) == round(expected * 30)


def test_confusion_figure_shows_unparseable_column() -> None:
    from studio.evaluation.evaluate import confusion_figure
    fig = confusion_figure({"labels": ["neg", "pos"], "matrix": [[3, 1], [0, 4]], "unparseable": [0, 2]})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["neg", "pos", "(unparseable)"]
    assert sorted(t.get_text() for t in ax.texts) == sorted(["3", "1", "0", "0", "4", "2"])


def test_load_rows_errors_and_csv(tmp_path: Path) -> None:
    from studio.evaluation.evaluate import load_rows
    with pytest.raises(StudioError) as e:
        load_rows(tmp_path / "missing.jsonl")
    assert e.value.message == f"Data file '{tmp_path / 'missing.jsonl'}' does not exist. Fix: check the path."
    p = tmp_path / "rows.csv"
    p.write_text("instruction,input,output\nQ,The lamp is great.,positive\nQ,It is awful.,negative\n",
                 encoding="utf-8")
    assert load_rows(p) == [{"instruction": "Q", "input": "The lamp is great.", "output": "positive"},
                            {"instruction": "Q", "input": "It is awful.", "output": "negative"}]
    # a text + label sheet goes through the data converter: label as output, text as input
    sheet = tmp_path / "reviews.csv"
    sheet.write_text("review,sentiment\nlovely lamp,positive\nbroken bag,negative\n", encoding="utf-8")
    rows = load_rows(sheet)
    assert [(r["input"], r["output"]) for r in rows] == [("lovely lamp", "positive"), ("broken bag", "negative")]
    assert rows[0]["instruction"] == rows[1]["instruction"] != ""
    bad = tmp_path / "notes.md"
    bad.write_text("hello", encoding="utf-8")
    with pytest.raises(StudioError, match="unsupported file type"):
        load_rows(bad)


def test_one_synonym_table_with_the_answer_tier_explicit() -> None:
    """Words that only mean a class as a cell value ('bad', 'good') never decide a model's free-text answer."""
    from studio.data.labels import SENTIMENT_DATA_ONLY, SENTIMENT_NAMES, label_key
    assert parse_label("not bad at all, positive", ["positive", "negative"]) == "positive"
    assert parse_label("not bad", ["positive", "negative"]) is None  # names no label: unparseable, not negative
    assert label_key("bad") == "negative" and label_key("好") == "positive"  # as data values they do map
    assert not set().union(*SENTIMENT_NAMES.values()) & set().union(*SENTIMENT_DATA_ONLY.values())
