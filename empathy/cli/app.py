"""``empathy app [DATA] [--port N] [--store STORE]``: start the app (the pages of ``streamlit run app.py``)."""

from __future__ import annotations

import argparse
import os

from empathy.cli.common import bounded_int, set_handler


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``app`` sub-command."""
    parser = commands.add_parser(
        "app", help="start the app in the browser (the bundled demo, or DATA)",
        description="Start the app: the same pages as `streamlit run app.py` in a clone, from wherever the package "
                    "is installed. It listens on 127.0.0.1 (this machine) unless --address says otherwise; any "
                    "other Streamlit setting comes from its STREAMLIT_* variables "
                    "(e.g. STREAMLIT_SERVER_MAX_UPLOAD_SIZE=500).")
    parser.add_argument("data", nargs="?", metavar="DATA",
                        help="a data folder (outputs.csv|jsonl|parquet and its ratings* files) or an outputs file "
                             "(the ratings* files beside it); default: the bundled demo")
    parser.add_argument("--port", type=bounded_int(1, 65535), metavar="N", help="port to listen on (default 8501)")
    parser.add_argument("--address", metavar="HOST",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 exposes the app to the network: "
                             "docs/how-to/serve-a-team.md)")
    parser.add_argument("--store", metavar="STORE",
                        help="override store: a SQLite file or a postgresql:// location (default: $EMPATHY_STORE, "
                             "else beside the data)")
    parser.add_argument("--headless", action="store_true", help="do not open a browser")
    set_handler(parser, run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``app``: start Streamlit on the app and wait until it stops; return its exit code."""
    from empathy.launch import plan_launch, run_app

    launch = plan_launch(args.data, port=args.port, address=args.address, store=args.store, headless=args.headless)
    print(f"empathy: starting the app from {launch.root} (Ctrl-C stops it)", flush=True)
    return run_app(launch, os.environ)
