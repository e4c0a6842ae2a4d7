"""The catalog: every entry file's list joined by the one registry (studio/words/entry.py ``Catalog``), which
refuses a code defined twice, so this module fails at import before a duplicate can hide.

An entry file holds the words of one kind or one part of the page; adding a file means adding its list here.
"""
from __future__ import annotations

from . import (app_errors, config_problems, data_errors, dataset_errors, eval_words, evaluation_errors, feedback_errors,
               fields, messages, model_errors, notice_words, page_labels, prepare_words, reason_words, report_words,
               run_errors, settings_words, stage_words, terms)
from .entry import Catalog

# the errors' sections: each item an error's entries (studio/words/entry.py ``error``) or a message it names
ERROR_GROUPS = (data_errors.ENTRIES, dataset_errors.ENTRIES, evaluation_errors.ENTRIES, app_errors.ENTRIES,
                run_errors.ENTRIES, model_errors.ENTRIES, feedback_errors.ENTRIES, stage_words.ENTRIES)
GROUPS = (
    fields.ENTRIES, page_labels.ENTRIES, messages.ENTRIES, settings_words.ENTRIES, eval_words.ENTRIES,
    prepare_words.ENTRIES, terms.ENTRIES, report_words.ENTRIES, reason_words.ENTRIES, notice_words.ENTRIES,
    config_problems.ENTRIES, run_errors.CLUSTER_PROBLEMS, *ERROR_GROUPS,
)
CATALOG = Catalog(*GROUPS)
