"""Job logs that ``tail -f`` can follow: timestamped flushed lines, the traceback on failure."""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def job_log(path: str | Path) -> Iterator[Callable[[str], None]]:
    """Open ``path`` and yield a ``log(message)`` function; stdout and stderr go there too."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", buffering=1) as handle:

        def log(message: str) -> None:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n")

        with contextlib.redirect_stdout(handle), contextlib.redirect_stderr(handle):
            try:
                yield log
            except BaseException:
                handle.write(traceback.format_exc())
                raise
