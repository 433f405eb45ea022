"""The example of README.md runs and computes what numpy and the reference evaluator compute."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest
from helpers import F32_LIMIT, README, assert_close, layer_norm


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_three_python_examples():
    assert len(python_blocks()) == 3


def test_the_readme_example(monkeypatch, cache_dir):
    monkeypatch.setenv("FSTITCH_CACHE_DIR", cache_dir)
    namespace = {"__name__": "readme_example"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python_blocks()[0], "README.md", "exec"), namespace)  # noqa: S102 - the documented example
    inputs = namespace["inputs"]
    expected = layer_norm(inputs["x"], inputs["w"], inputs["b"])
    assert_close(namespace["y"], expected, F32_LIMIT)
    assert_close(namespace["reference"], expected, F32_LIMIT)
    lines = printed.getvalue().splitlines()
    assert lines[0].startswith("1 kernel(s): ['")
    difference = float(lines[1].rsplit(":", 1)[1])
    assert (
        difference == float(np.abs(namespace["y"] - namespace["reference"]).max())
        and difference < 1e-4
    )


def test_the_readme_opaque_example(monkeypatch, cache_dir):
    monkeypatch.setenv("FSTITCH_CACHE_DIR", cache_dir)
    namespace = {"__name__": "readme_opaque_example"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python_blocks()[1], "README.md", "exec"), namespace)  # noqa: S102 - the documented example
    inputs = namespace["inputs"]
    x, w = (inputs[name].astype(np.float64) for name in ("x", "w"))
    expected = np.tanh((x * 0.5) @ w)
    assert_close(namespace["y"], expected, F32_LIMIT)
    assert_close(namespace["reference"], expected, F32_LIMIT)
    assert printed.getvalue().splitlines() == ["['kernel', 'opaque', 'kernel']"]


@pytest.mark.torch
def test_the_readme_torch_example(monkeypatch, cache_dir):
    torch = pytest.importorskip("torch", reason="the torch example needs PyTorch")
    import fstitch.torch

    monkeypatch.setenv("FSTITCH_CACHE_DIR", cache_dir)
    torch._dynamo.reset()
    fstitch.torch.reset_counters()
    namespace = {"__name__": "readme_torch_example"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python_blocks()[2], "README.md", "exec"), namespace)  # noqa: S102 - the documented example
    torch._dynamo.reset()
    model, y = namespace["model"], namespace["y"]
    assert y.shape == (8, 256)
    assert fstitch.torch.counters["fallbacks"] == 0 and fstitch.torch.counters["compiles"] >= 2
    x = torch.randn(8, 64)
    with torch.no_grad():
        assert torch.allclose(torch.compile(model, backend="fstitch")(x), model(x), atol=1e-5)
    torch._dynamo.reset()
    assert "fused kernel(s)" in printed.getvalue()
