"""Shared test helpers: numerical comparison and paths."""

from __future__ import annotations

import pathlib

import numpy as np

#: The repository root (bindings/python/tests/ is three levels below it).
REPO = pathlib.Path(__file__).resolve().parents[3]
HEADER = REPO / "include" / "fstitch.h"
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"

#: Relative L2 error limits against float64 references (docs/testing.md).
F32_LIMIT = 1e-5
HALF_LIMIT = 1e-2


def relative_l2(actual, expected) -> float:
    """||actual - expected|| / ||expected|| in float64; inf when anything is NaN."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    if np.isnan(a).any() or np.isnan(e).any():
        return float("inf")
    norm = np.linalg.norm(e.ravel())
    return float(np.linalg.norm((a - e).ravel()) / (norm if norm > 0 else 1.0))


def assert_close(actual, expected, limit: float = F32_LIMIT) -> None:
    error = relative_l2(actual, expected)
    assert error < limit, f"relative L2 error {error:.3g} exceeds {limit:.1g}"


def layer_norm(x, w, b, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * w + b


def softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
