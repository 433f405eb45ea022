"""Fixtures: a host-backend context with a kernel cache for the session, graphs, random data."""

from __future__ import annotations

import os

import numpy as np
import pytest

import fstitch


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> str:
    """$FSTITCH_PY_CACHE_DIR (kept between runs by run-tests), else a fresh directory."""
    return os.environ.get("FSTITCH_PY_CACHE_DIR") or str(tmp_path_factory.mktemp("kernel-cache"))


@pytest.fixture(scope="session")
def ctx(cache_dir):
    """A context on the host backend, whatever $FSTITCH_BACKEND says."""
    context = fstitch.Context(backend="host", cache_dir=cache_dir, log_level="error")
    yield context
    context.close()


@pytest.fixture
def graph(ctx):
    g = ctx.graph()
    yield g
    g.close()


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)
