"""The run's prompt format as other runtimes read it: a Jinja ``chat_template`` (llama.cpp, transformers) and an
Ollama ``Modelfile`` (a Go template, stop words, sampling parameters).

Both are generated from the same ``Template`` fields that training renders with (``studio/data/templates.py``), so a
conversation rendered by either is the training prompt string, character for character. Every fixed piece of text
is written as a quoted string literal (JSON quoting, which Jinja, llama.cpp's Jinja engine and Go all read the same
way), so no whitespace rule of either template language can add or drop a character.

Which formats can be expressed:
* every named built-in template (studio, alpaca, chatml, qwen, llama3, gemma, smollm2, mistral, ...): its slots are
  fixed text around the message, the system prompt and the answer, which both languages can say;
* ``template: auto`` (the tokenizer's own Jinja template): embedded as it is in the GGUF; the Modelfile only when the
  tokenizer's template renders exactly like one of the built-ins (checked on sample conversations), since an
  arbitrary Jinja program has no Go equivalent -- otherwise ``modelfile_text`` refuses with a StudioError.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..data.templates import TEMPLATES, ChatTemplate, Template, _bind
from ..errors import StudioError

_SLOT = "\x01CONTENT\x01"  # stands for {content} while a slot is split into (before, after)
_PROBES: list[list[dict[str, str]]] = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "a\nb"}, {"role": "assistant", "content": "c"},
     {"role": "user", "content": "d"}],
]


def _lit(text: str) -> str:
    """A string literal that Jinja, minja (llama.cpp) and Go text/template all read back as ``text``."""
    return json.dumps(text, ensure_ascii=False)


def _split(t: Template, slot: str) -> tuple[str, str] | None:
    """(text before the message, text after it) of a slot, with BOS/EOS filled in; None when it drops the message."""
    filled = t._fill(slot, _SLOT)
    if _SLOT not in filled:
        return None
    before, after = filled.split(_SLOT, 1)
    return before, after


def jinja_template(t: Template) -> str:
    """A Jinja chat template that renders ``messages`` exactly as ``t.chat_prompt`` / ``t.render`` do.

    The first system message (else the template's default system prompt) goes where the template puts it; user
    turns end with the answer header (so ``add_generation_prompt`` changes nothing); answers end as trained.
    """
    user, answer = _split(t, t.user), _split(t, t.assistant)
    if user is None or answer is None:
        raise StudioError.of("export.template_drops_text", name=t.name)
    system = _split(t, t.system_fmt)
    out = ["{%- set ns = namespace(system='', found=false, fold='') -%}",
           "{%- for m in messages -%}{%- if m['role'] == 'system' and not ns.found -%}"
           "{%- set ns.system = m['content'] -%}{%- set ns.found = true -%}{%- endif -%}{%- endfor -%}"]
    if t.default_system:
        out.append("{%- if not ns.system -%}{%- set ns.system = " + _lit(t.default_system) + " -%}{%- endif -%}")
    prefix = t._fill(t.prefix)
    if prefix:
        out.append("{{- " + _lit(prefix) + " -}}")
    if system is not None:
        head = _lit(system[0]) + " + ns.system + " + _lit(system[1])
        out.append("{%- if ns.system -%}" + ("{%- set ns.fold = " + head + " -%}" if t.system_in_user
                                              else "{{- " + head + " -}}") + "{%- endif -%}")
    out.append("{%- for m in messages -%}"
               "{%- if m['role'] == 'user' -%}{{- " + _lit(user[0]) + " + ns.fold + m['content'] + " + _lit(user[1])
               + " -}}{%- set ns.fold = '' -%}"
               "{%- elif m['role'] == 'assistant' -%}{{- " + _lit(answer[0]) + " + m['content'] + " + _lit(answer[1])
               + " -}}{%- endif -%}{%- endfor -%}")
    return "".join(out)


def go_template(t: Template) -> str:
    """The Ollama TEMPLATE (Go text/template over ``.System`` and ``.Messages``) equivalent to ``t``.

    Ollama fills ``.System`` from the request's system message, else the Modelfile's SYSTEM line (which carries the
    template's default system prompt), and lists every message, system ones included, in ``.Messages``.
    """
    user, answer = _split(t, t.user), _split(t, t.assistant)
    if user is None or answer is None:
        raise StudioError.of("export.template_drops_text", name=t.name)
    system = _split(t, t.system_fmt)

    def text(s: str) -> str:
        return "{{ " + _lit(s) + " }}" if s else ""
    sys_text = (text(system[0]) + "{{ $.System }}" + text(system[1])) if system is not None else ""
    lines = ["{{- $first := true }}"]
    prefix = t._fill(t.prefix)
    if prefix:
        lines.append("{{- " + _lit(prefix) + " }}")
    if sys_text and not t.system_in_user:
        lines.append("{{- if .System }}" + sys_text + "{{ end }}")
    fold = "{{ if and $first $.System }}" + sys_text + "{{ end }}" if sys_text and t.system_in_user else ""
    lines += ["{{- range .Messages }}",
              '{{- if eq .Role "user" }}' + text(user[0]) + fold + "{{ $first = false }}{{ .Content }}" + text(user[1]),
              '{{- else if eq .Role "assistant" }}' + text(answer[0]) + "{{ .Content }}" + text(answer[1]),
              "{{- end }}",
              "{{- end }}"]
    out = "\n".join(lines)
    if '"""' in out:  # the Modelfile quotes TEMPLATE with triple quotes
        raise StudioError.of("export.template_quotes", name=t.name)
    return out


def expressible_template(template: Template) -> Template:
    """The named template whose Go form says what ``template`` says: itself, or for ``template: auto`` the built-in
    that renders every probe conversation exactly as the tokenizer's own chat template does.

    Raises:
        StudioError: an ``auto`` template that matches no built-in (an arbitrary Jinja program has no Go form).
    """
    if not isinstance(template, ChatTemplate):
        return template
    tok = template._tok  # type: ignore[attr-defined]
    try:
        wanted = [template.chat_prompt(p) for p in _PROBES]
    except Exception:  # noqa: BLE001 -- a chat template that refuses a probe (e.g. system turns) matches nothing
        wanted = []
    bound = [_bind(c, tok) for c in TEMPLATES.values()] if wanted else []
    # each built-in as it is, then the ones without a default system prompt of their own given the tokenizer's
    forms = bound + [_own_default_system(b, wanted[0]) for b in bound if not b.default_system]
    for form in forms:
        if form is not None and [form.chat_prompt(p) for p in _PROBES] == wanted:
            return form
    raise StudioError.of("export.no_modelfile")


def _own_default_system(t: Template, wanted: str) -> Template | None:
    """``t`` with the default system prompt the tokenizer's template writes when a conversation has none (SmolLM2's
    own says "... trained by Hugging Face" where LLaMA-Factory's smollm2 adds a full stop), else None."""
    shaped = dataclasses.replace(t, default_system=_SLOT).chat_prompt(_PROBES[0])
    if _SLOT not in shaped:
        return None
    before, after = shaped.split(_SLOT, 1)
    if len(wanted) <= len(before) + len(after) or not (wanted.startswith(before) and wanted.endswith(after)):
        return None
    return dataclasses.replace(t, default_system=wanted[len(before):len(wanted) - len(after)])


def stop_words(t: Template, eos_text: str = "") -> list[str]:
    """What ends an answer (the template's end-of-answer marker, EOS) and what would open the next user turn."""
    answer, user = _split(t, t.assistant), _split(t, t.user)
    words = [answer[1].strip() if answer else "", eos_text, (user[0].strip() if user else "")]
    seen: list[str] = []
    for w in words:
        if w and "\n" not in w and '"' not in w and w not in seen:
            seen.append(w)
    return seen


def modelfile_text(t: Template, params: dict[str, Any], gguf_name: str = "model.gguf", eos_text: str = "") -> str:
    """An Ollama Modelfile for the GGUF beside it: FROM, TEMPLATE, SYSTEM (the default one), stops, sampling."""
    own = isinstance(t, ChatTemplate)
    t = expressible_template(t)
    said = f"the model's own chat template, which renders as '{t.name}'" if own else f"template '{t.name}'"
    lines = ["# Made by Fine-Tune Studio: `ollama create my-model -f Modelfile`, then `ollama run my-model`.",
             f"# The TEMPLATE renders the prompt exactly as training did ({said}).",
             f"FROM ./{gguf_name}", f'TEMPLATE """{go_template(t)}"""']
    if t.default_system:
        lines.append(f"SYSTEM {_lit(t.default_system)}")
    for word in stop_words(t, eos_text):
        lines.append(f"PARAMETER stop {_lit(word)}")
    for key in ("temperature", "top_p", "num_predict"):
        if key in params:
            lines.append(f"PARAMETER {key} {params[key]}")
    return "\n".join(lines) + "\n"
