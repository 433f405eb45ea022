"""User values as they appear in error messages: repr, cut short.

A megabyte name or a huge list must not make a megabyte message; the C library cuts its
own quotes at 64 bytes the same way.
"""

from __future__ import annotations

from typing import Any

SHOWN_LIMIT = 64


def shown(value: Any) -> str:
    """repr(value), cut after SHOWN_LIMIT characters with the full length noted."""
    text = repr(value)
    if len(text) <= SHOWN_LIMIT:
        return text
    return f"{text[:SHOWN_LIMIT]}... ({len(text)} characters)"
