"""Start Fine-Tune Studio in the browser:  python launch.py [--host 127.0.0.1] [--port 7860] [--share]
[--auth USER:PASS | --auth-file FILE] [--no-auth] [--lang en|zh] [--max-upload-mb N] [--data-root DIR]
[--workspace DIR]"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from studio.errors import StudioError  # noqa: E402
from studio.ui import app  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="launch.py", description="Fine-Tune Studio web UI")
    app.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return app.main(args)
    except StudioError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
