"""Log set-up for `cutile-serve`: `--log-format text` (default) or `json`.

`json` writes one JSON object per line with `time` (UTC, ISO 8601, milliseconds),
`level`, `logger` and `message`; request lines add the fields the servicer passes as
`extra` (Compile: rpc, entry, target, outcome, ms, key; CompileBatch: rpc, items, failed,
ms), and a logged exception adds `exc` (its traceback as text).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import TextIO

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# the `extra` keys a log record may carry into its JSON object
REQUEST_FIELDS = ("rpc", "entry", "target", "outcome", "ms", "key", "items", "failed")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, tz=timezone.utc)
        line: dict[str, object] = {
            "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in REQUEST_FIELDS:
            if name in record.__dict__:
                line[name] = record.__dict__[name]
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, default=str, ensure_ascii=False)


def configure(level: str = "INFO", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Route the root logger to `stream` (default stderr) in the chosen format."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
