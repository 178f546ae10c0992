"""``python -m devtools.assist_baseline [--host 127.0.0.1] [--port 8765] [--token T]
[--openai-url http://127.0.0.1:8080/v1 --openai-model M --openai-key K]``: serve the baseline."""

from __future__ import annotations

import argparse
import logging
import os

from pipeline.release.short_answers.llm import LLMConfig

from .server import Config, make_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.assist_baseline", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=os.environ.get("ASSIST_TOKEN", ""), help="required bearer token")
    parser.add_argument("--openai-url", default=os.environ.get("ASSIST_OPENAI_URL", ""), help="e.g. .../v1")
    parser.add_argument("--openai-model", default=os.environ.get("ASSIST_OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--openai-key", default=os.environ.get("ASSIST_OPENAI_KEY", ""))
    parser.add_argument("--openai-timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    openai = None
    if args.openai_url:
        openai = LLMConfig(
            base_url=args.openai_url.rstrip("/"),
            api_key=args.openai_key,
            model=args.openai_model,
            timeout=args.openai_timeout,
        )
    server = make_server(args.host, args.port, Config(token=args.token, openai=openai))
    logging.info("assist baseline on http://%s:%s (POST /suggest, GET /health)", args.host, args.port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
