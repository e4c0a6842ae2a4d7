"""python -m studio VERB: the command line's verbs (studio/cli/main.py) and the two that serve a page, named here,
above both, so that cli/ never loads a module of ui/ (tests/project/test_architecture.py)."""
from .cli.main import Verbs, main

PAGE_VERBS: Verbs = {
    "webui": ("studio.ui.app", "start the web studio (same as launch.py)"),
    "demo": ("studio.ui.demo", "a page with one finished run's model for teammates (try it, batch-predict, chat)"),
}

if __name__ == "__main__":
    raise SystemExit(main(extra=PAGE_VERBS))
