"""The words of the results page, kept out of the code: ``workflow/templates/``.

``phrases.yaml`` holds every sentence the generator writes, as ``str.format`` text whose
``{fields}`` the code fills from the reference's tables; ``*.md`` there are page skeletons with
``$fields`` (``string.Template``). A reader rewords a sentence there without touching a line of
Python; the code only chooses which sentence applies and supplies the numbers.
"""

from __future__ import annotations

import functools
import string
from pathlib import Path
from typing import Any

import yaml

TEMPLATES = Path(__file__).resolve().parent / "templates"
PHRASES = TEMPLATES / "phrases.yaml"


class PhraseError(LookupError):
    """A sentence or a field the templates lack."""


@functools.cache
def _phrases() -> dict[str, Any]:
    with PHRASES.open() as handle:
        return yaml.safe_load(handle)


def text(key: str) -> Any:
    """The entry at a dotted ``key`` of phrases.yaml (a sentence, or a mapping of them)."""
    node: Any = _phrases()
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise PhraseError(f"{PHRASES} has no entry {key!r}: add it there")
        node = node[part]
    return node


def say(key: str, **fields: Any) -> str:
    """The sentence at ``key`` with its ``{fields}`` filled in."""
    sentence = str(text(key))
    try:
        return sentence.format(**fields)
    except (KeyError, IndexError) as error:
        raise PhraseError(f"{PHRASES}, entry {key!r}: no value for field {error}") from None


def fill(template: str, **fields: Any) -> str:
    """The page skeleton ``templates/<template>.md`` with its ``$fields`` filled in."""
    path = TEMPLATES / f"{template}.md"
    try:
        return string.Template(path.read_text()).substitute(fields)
    except KeyError as error:
        raise PhraseError(f"{path}: no value for ${error.args[0]}") from None
