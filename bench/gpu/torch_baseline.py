#!/usr/bin/env python3
"""Framework baselines for the GPU benchmark: the six canonical graphs of
tests/common/canonical_graphs.cpp and the reductions (sums, column softmax, norm backwards,
GroupNorm) of tests/common/reduction_graphs.cpp written in PyTorch (eager and
torch.compile) and, when it imports, JAX (jax.jit), and the multi-tensor optimizer steps of
tests/common/packed_graphs.cpp: AdamW as torch.optim.AdamW runs it (foreach, fused,
compiled) and LAMB, which torch does not ship, written with torch's multi-tensor (_foreach)
operations (eager and compiled), at the shapes and dtypes fstitch_bench_gpu uses, timed the same way:
warm-up runs, then timed runs each preceded by an L2 flush (a write over a buffer several
times the L2 size), median of CUDA events. The device-to-device copy bandwidth is measured
the same way. Results go to a JSON file, rewritten after every case, so a run cut short
still leaves what it measured.

  torch_baseline.py --output torch.json            # full: 8192x4096 and 16384x1024 (the
                                                   # reductions at their own shapes)
  torch_baseline.py --quick --output torch.json    # 4096x1024
  torch_baseline.py --device cpu --quick           # a dry run without a GPU (eager only)

A failure of one mode on one graph (a torch.compile error, say) is recorded in that case and
the run goes on.
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

GRAPHS = [
    "layer_norm",
    "softmax_scale_mask",
    "rms_norm",
    "log_softmax",
    "bias_residual_layer_norm",
    "gelu_bias",
]
SHAPES = {"full": [(8192, 4096), (16384, 1024)], "quick": [(4096, 1024)]}
# The graphs of tests/common/reduction_graphs.cpp: input shape (the one fstitch_bench_gpu runs
# in every timed mode) and the axis reduced down the columns. The sums and the column softmax
# compute 16-bit inputs in f32; the norm backwards compute in the input's dtype, op by op, as
# their graphs do.
REDUCTIONS = {
    "bias_grad_column_sum": ((8192, 1024), 0),
    "middle_axis_sum": ((64, 4096, 64), 1),
    "column_softmax": ((4096, 1024), 0),
    # Beyond the device's registers: fstitch keeps the chunks in shared memory.
    "column_softmax_large": ((16384, 768), 0),
    "layer_norm_backward": ((8192, 1024), 0),
    "rms_norm_backward": ((8192, 1024), 0),
    "group_norm": ((8, 512, 4096), 2),
    # Training forward over NCHW: statistics over axes 0, 2 and 3 (ResNet-50's first, batch 32).
    "batch_norm": ((32, 64, 56, 56), 0),
    # Statistics of each image's channel over H x W (56 x 56 = 3136 columns a row).
    "instance_norm": ((32, 64, 56, 56), 0),
    # A softmax over each row divided by its column sums (one Sinkhorn step of an attention
    # map): rows, then columns, over the same data.
    "sinkhorn_step": ((4096, 1024), 0),
    # The step's rows summed and divided again: a full Sinkhorn iteration (rows, columns, rows).
    "sinkhorn_iteration": ((4096, 1024), 0),
    # Two iterations: columns, rows, columns, rows after the softmax (two grid barriers).
    "sinkhorn_two_iterations": ((4096, 1024), 0),
}
GROUP_NORM_GROUPS = 32  # kBenchmarkGroups of reduction_graphs.hpp
# Elements a reduction graph writes, from its input shape (default: the kept axes, once).
REDUCTION_OUTPUT_ELEMENTS = {
    "column_softmax": lambda dims: element_count(dims),
    "column_softmax_large": lambda dims: element_count(dims),
    "layer_norm_backward": lambda dims: element_count(dims) + 2 * dims[-1],  # dx, dgamma, dbeta
    "rms_norm_backward": lambda dims: element_count(dims) + dims[-1],  # dx, dgamma
    "group_norm": lambda dims: element_count(dims),
    "batch_norm": lambda dims: element_count(dims) + 2 * dims[1],  # y, the batch's mean and variance
    "instance_norm": lambda dims: element_count(dims),
    "sinkhorn_step": lambda dims: element_count(dims),
    "sinkhorn_iteration": lambda dims: element_count(dims),
    "sinkhorn_two_iterations": lambda dims: element_count(dims),
}
# The multi-tensor optimizer steps of tests/common/packed_graphs.cpp over `dims[0]` parameter
# tensors of transformer_parameter_sizes, f32 only (torch keeps the moments in the
# parameters' dtype, fstitch's graphs in f32; in f32 both move the same bytes). AdamW (the
# constants of adamw_step) is timed as torch.optim.AdamW runs it: foreach (eager mode's
# default on CUDA), fused=True (one kernel per launch over many tensors) and torch.compile of
# the foreach step. LAMB (the constants of lamb_step) has no torch.optim class: eager mode is
# lamb_foreach_step below, compile mode torch.compile of it.
OPTIMIZERS = {"adamw_step": (100,), "lamb_step": (100,)}
ADAMW = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
LAMB = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.01, "step": 10}
OPTIMIZER_MODES = ["eager", "fused", "compile"]
SHAPED = {**{name: dims for name, (dims, _) in REDUCTIONS.items()}, **OPTIMIZERS}
ALL_GRAPHS = GRAPHS + list(REDUCTIONS) + list(OPTIMIZERS)
DTYPES = ["f32", "bf16"]
ALL_MODES = ["eager", "compile", "max_autotune", "jax"]  # an optimizer step also runs "fused"

# Which inputs each graph takes: "m" is [rows, cols], "v" is [cols] (canonical_graphs.cpp).
INPUTS = {
    "layer_norm": [("x", "m"), ("gamma", "v"), ("beta", "v")],
    "softmax_scale_mask": [("x", "m"), ("mask", "m")],
    "rms_norm": [("x", "m"), ("w", "v")],
    "log_softmax": [("x", "m")],
    "bias_residual_layer_norm": [("x", "m"), ("bias", "v"), ("residual", "m"), ("gamma", "v"), ("beta", "v")],
    "gelu_bias": [("x", "m"), ("bias", "v")],
    "bias_grad_column_sum": [("dy", "d")],  # "d": the reduction's input shape
    "middle_axis_sum": [("x", "d")],
    "column_softmax": [("x", "d")],
    "column_softmax_large": [("x", "d")],
    "layer_norm_backward": [("x", "d"), ("dy", "d"), ("w", "dv")],  # "dv": the input shape's last axis
    "rms_norm_backward": [("x", "d"), ("dy", "d"), ("w", "dv")],
    "group_norm": [("x", "d"), ("gamma", "dc"), ("beta", "dc")],  # "dc": the input shape's channel axis (1)
    "batch_norm": [("x", "d"), ("gamma", "dc"), ("beta", "dc")],
    "instance_norm": [("x", "d"), ("gamma", "dc"), ("beta", "dc")],
    "sinkhorn_step": [("x", "d")],
    "sinkhorn_iteration": [("x", "d")],
    "sinkhorn_two_iterations": [("x", "d")],
}
OUTPUT_COUNT = {name: 2 if name == "bias_residual_layer_norm" else 1 for name in GRAPHS}
ELEMENT_BYTES = {"f32": 4, "bf16": 2}


def element_count(dims):
    count = 1
    for d in dims:
        count *= d
    return count


def shape_text(rows, cols, dims=None):
    return "x".join(str(d) for d in dims) if dims else f"{rows}x{cols}"


def transformer_parameter_sizes(tensors):
    """Element counts of a BERT-base-sized layer's tensors, cycling as packed_graphs.cpp does."""
    cycle = (768 * 768, 768, 3072, 4 * 3072)
    return [cycle[i % 4] for i in range(tensors)]


def lower_bound_bytes(graph, rows, cols, dtype, dims=None):
    """Each input read once and each output written once, as fst_fusion_planned_bytes counts."""
    if graph in OPTIMIZERS:  # p, g, m and v read; p, m and v written
        return 7 * sum(transformer_parameter_sizes(dims[0])) * ELEMENT_BYTES[dtype]
    if graph in REDUCTIONS:
        axis = REDUCTIONS[graph][1]
        inputs = sum(element_count(dims) if kind == "d" else dims[1] if kind == "dc" else dims[-1]
                     for _, kind in INPUTS[graph])
        kept = element_count([d for i, d in enumerate(dims) if i != axis])
        outputs = REDUCTION_OUTPUT_ELEMENTS[graph](dims) if graph in REDUCTION_OUTPUT_ELEMENTS else kept
        return (inputs + outputs) * ELEMENT_BYTES[dtype]
    elements = sum(rows * cols if kind == "m" else cols for _, kind in INPUTS[graph])
    elements += OUTPUT_COUNT[graph] * rows * cols
    return elements * ELEMENT_BYTES[dtype]


def torch_graphs(torch):
    """The canonical graphs in torch: f16/bf16 inputs are computed in f32 and cast back,
    exactly as the canonical builders decompose them."""
    F = torch.nn.functional

    def normalize(x):
        mean = x.mean(dim=-1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=-1, keepdim=True)
        return centered * torch.rsqrt(var + 1e-5)

    def layer_norm(x, gamma, beta):
        return ((normalize(x.float()) * gamma.float() + beta.float()).to(x.dtype),)

    def softmax_scale_mask(x, mask):
        scaled = x.float() * 0.125 + mask.float()
        e = torch.exp(scaled - scaled.amax(dim=-1, keepdim=True))
        return ((e / e.sum(dim=-1, keepdim=True)).to(x.dtype),)

    def rms_norm(x, w):
        xf = x.float()
        ms = (xf * xf).mean(dim=-1, keepdim=True)
        return ((xf * torch.rsqrt(ms + 1e-6) * w.float()).to(x.dtype),)

    def log_softmax(x):
        xf = x.float()
        shifted = xf - xf.amax(dim=-1, keepdim=True)
        lse = torch.log(torch.exp(shifted).sum(dim=-1, keepdim=True))
        return ((shifted - lse).to(x.dtype),)

    def bias_residual_layer_norm(x, bias, residual, gamma, beta):
        h = x.float() + bias.float() + residual.float()
        y = normalize(h) * gamma.float() + beta.float()
        return (y.to(x.dtype), h.to(x.dtype))

    def gelu_bias(x, bias):
        return (F.gelu(x.float() + bias.float()).to(x.dtype),)

    def bias_grad_column_sum(dy):
        return (dy.float().sum(dim=0).to(dy.dtype),)

    def middle_axis_sum(x):
        return (x.float().sum(dim=1).to(x.dtype),)

    def column_softmax(x):
        xf = x.float()
        e = torch.exp(xf - xf.amax(dim=0, keepdim=True))
        return ((e / e.sum(dim=0, keepdim=True)).to(x.dtype),)

    def sinkhorn_step(x):
        xf = x.float()
        e = torch.exp(xf - xf.amax(dim=1, keepdim=True))
        y = e / e.sum(dim=1, keepdim=True)
        return ((y / y.sum(dim=0, keepdim=True)).to(x.dtype),)

    def sinkhorn_iteration(x):
        xf = x.float()
        e = torch.exp(xf - xf.amax(dim=1, keepdim=True))
        y = e / e.sum(dim=1, keepdim=True)
        z = y / y.sum(dim=0, keepdim=True)
        return ((z / z.sum(dim=1, keepdim=True)).to(x.dtype),)

    def sinkhorn_two_iterations(x):
        xf = x.float()
        e = torch.exp(xf - xf.amax(dim=1, keepdim=True))
        z = e / e.sum(dim=1, keepdim=True)
        for _ in range(2):
            z = z / z.sum(dim=0, keepdim=True)
            z = z / z.sum(dim=1, keepdim=True)
        return (z.to(x.dtype),)

    def layer_norm_backward(x, dy, w):
        xc = x - x.mean(dim=1, keepdim=True)
        rstd = torch.rsqrt((xc * xc).mean(dim=1, keepdim=True) + 1e-5)
        xhat = xc * rstd
        gw = dy * w
        inner = (gw - gw.mean(dim=1, keepdim=True)) - xhat * (gw * xhat).mean(dim=1, keepdim=True)
        return (rstd * inner, (dy * xhat).sum(dim=0), dy.sum(dim=0))

    def rms_norm_backward(x, dy, w):
        rstd = torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-6)
        xhat = x * rstd
        gw = dy * w
        dot = (gw * xhat).mean(dim=1, keepdim=True)
        return (rstd * (gw - xhat * dot), (dy * xhat).sum(dim=0, keepdim=True))

    def group_norm(x, gamma, beta):
        return (F.group_norm(x, GROUP_NORM_GROUPS, gamma, beta, eps=1e-5),)

    def batch_norm(x, gamma, beta):
        # Training mode as a framework's forward calls it (cuDNN where it applies); the
        # batch's statistics stay inside (fstitch's graph writes them out: 2 x C elements).
        return (F.batch_norm(x, None, None, gamma, beta, training=True, eps=1e-5),)

    def instance_norm(x, gamma, beta):
        return (F.instance_norm(x, None, None, gamma, beta, use_input_stats=True, eps=1e-5),)

    return {
        "layer_norm": layer_norm,
        "softmax_scale_mask": softmax_scale_mask,
        "rms_norm": rms_norm,
        "log_softmax": log_softmax,
        "bias_residual_layer_norm": bias_residual_layer_norm,
        "gelu_bias": gelu_bias,
        "bias_grad_column_sum": bias_grad_column_sum,
        "middle_axis_sum": middle_axis_sum,
        "column_softmax": column_softmax,
        "column_softmax_large": column_softmax,
        "layer_norm_backward": layer_norm_backward,
        "rms_norm_backward": rms_norm_backward,
        "group_norm": group_norm,
        "batch_norm": batch_norm,
        "instance_norm": instance_norm,
        "sinkhorn_step": sinkhorn_step,
        "sinkhorn_iteration": sinkhorn_iteration,
        "sinkhorn_two_iterations": sinkhorn_two_iterations,
    }


def jax_graphs(jax, jnp):
    """The same graphs in JAX."""

    def normalize(x):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        var = jnp.mean(centered * centered, axis=-1, keepdims=True)
        return centered * jax.lax.rsqrt(var + 1e-5)

    f32 = jnp.float32

    def layer_norm(x, gamma, beta):
        return ((normalize(x.astype(f32)) * gamma.astype(f32) + beta.astype(f32)).astype(x.dtype),)

    def softmax_scale_mask(x, mask):
        scaled = x.astype(f32) * 0.125 + mask.astype(f32)
        e = jnp.exp(scaled - jnp.max(scaled, axis=-1, keepdims=True))
        return ((e / jnp.sum(e, axis=-1, keepdims=True)).astype(x.dtype),)

    def rms_norm(x, w):
        xf = x.astype(f32)
        ms = jnp.mean(xf * xf, axis=-1, keepdims=True)
        return ((xf * jax.lax.rsqrt(ms + 1e-6) * w.astype(f32)).astype(x.dtype),)

    def log_softmax(x):
        xf = x.astype(f32)
        shifted = xf - jnp.max(xf, axis=-1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
        return ((shifted - lse).astype(x.dtype),)

    def bias_residual_layer_norm(x, bias, residual, gamma, beta):
        h = x.astype(f32) + bias.astype(f32) + residual.astype(f32)
        y = normalize(h) * gamma.astype(f32) + beta.astype(f32)
        return (y.astype(x.dtype), h.astype(x.dtype))

    def gelu_bias(x, bias):
        return (jax.nn.gelu(x.astype(f32) + bias.astype(f32), approximate=False).astype(x.dtype),)

    def bias_grad_column_sum(dy):
        return (jnp.sum(dy.astype(f32), axis=0).astype(dy.dtype),)

    def middle_axis_sum(x):
        return (jnp.sum(x.astype(f32), axis=1).astype(x.dtype),)

    def column_softmax(x):
        xf = x.astype(f32)
        e = jnp.exp(xf - jnp.max(xf, axis=0, keepdims=True))
        return ((e / jnp.sum(e, axis=0, keepdims=True)).astype(x.dtype),)

    def sinkhorn_step(x):
        xf = x.astype(f32)
        e = jnp.exp(xf - jnp.max(xf, axis=1, keepdims=True))
        y = e / jnp.sum(e, axis=1, keepdims=True)
        return ((y / jnp.sum(y, axis=0, keepdims=True)).astype(x.dtype),)

    def sinkhorn_iteration(x):
        xf = x.astype(f32)
        e = jnp.exp(xf - jnp.max(xf, axis=1, keepdims=True))
        y = e / jnp.sum(e, axis=1, keepdims=True)
        z = y / jnp.sum(y, axis=0, keepdims=True)
        return ((z / jnp.sum(z, axis=1, keepdims=True)).astype(x.dtype),)

    def sinkhorn_two_iterations(x):
        xf = x.astype(f32)
        e = jnp.exp(xf - jnp.max(xf, axis=1, keepdims=True))
        z = e / jnp.sum(e, axis=1, keepdims=True)
        for _ in range(2):
            z = z / jnp.sum(z, axis=0, keepdims=True)
            z = z / jnp.sum(z, axis=1, keepdims=True)
        return (z.astype(x.dtype),)

    def layer_norm_backward(x, dy, w):
        xc = x - jnp.mean(x, axis=1, keepdims=True)
        rstd = jax.lax.rsqrt(jnp.mean(xc * xc, axis=1, keepdims=True) + 1e-5)
        xhat = xc * rstd
        gw = dy * w
        inner = (gw - jnp.mean(gw, axis=1, keepdims=True)) - xhat * jnp.mean(gw * xhat, axis=1, keepdims=True)
        return (rstd * inner, jnp.sum(dy * xhat, axis=0), jnp.sum(dy, axis=0))

    def rms_norm_backward(x, dy, w):
        rstd = jax.lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) + 1e-6)
        xhat = x * rstd
        gw = dy * w
        dot = jnp.mean(gw * xhat, axis=1, keepdims=True)
        return (rstd * (gw - xhat * dot), jnp.sum(dy * xhat, axis=0, keepdims=True))

    def group_norm(x, gamma, beta):
        n, c = x.shape[0], x.shape[1]
        xv = x.astype(f32).reshape(n, GROUP_NORM_GROUPS, -1)
        xc = xv - jnp.mean(xv, axis=2, keepdims=True)
        xhat = (xc * jax.lax.rsqrt(jnp.mean(xc * xc, axis=2, keepdims=True) + 1e-5)).reshape(x.shape)
        affine = (-1, c) + (1,) * (x.ndim - 2)
        y = xhat * gamma.astype(f32).reshape(affine) + beta.astype(f32).reshape(affine)
        return (y.astype(x.dtype),)

    def batch_norm(x, gamma, beta):
        xf = x.astype(f32)
        mean = jnp.mean(xf, axis=(0, 2, 3), keepdims=True)
        var = jnp.mean((xf - mean) * (xf - mean), axis=(0, 2, 3), keepdims=True)
        affine = (1, -1, 1, 1)
        y = (xf - mean) * jax.lax.rsqrt(var + 1e-5) * gamma.astype(f32).reshape(affine) + \
            beta.astype(f32).reshape(affine)
        return (y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype))

    def instance_norm(x, gamma, beta):
        xf = x.astype(f32)
        mean = jnp.mean(xf, axis=(2, 3), keepdims=True)
        var = jnp.mean((xf - mean) * (xf - mean), axis=(2, 3), keepdims=True)
        affine = (1, -1, 1, 1)
        y = (xf - mean) * jax.lax.rsqrt(var + 1e-5) * gamma.astype(f32).reshape(affine) + \
            beta.astype(f32).reshape(affine)
        return (y.astype(x.dtype),)

    return {
        "layer_norm": layer_norm,
        "softmax_scale_mask": softmax_scale_mask,
        "rms_norm": rms_norm,
        "log_softmax": log_softmax,
        "bias_residual_layer_norm": bias_residual_layer_norm,
        "gelu_bias": gelu_bias,
        "bias_grad_column_sum": bias_grad_column_sum,
        "middle_axis_sum": middle_axis_sum,
        "column_softmax": column_softmax,
        "column_softmax_large": column_softmax,
        "layer_norm_backward": layer_norm_backward,
        "rms_norm_backward": rms_norm_backward,
        "group_norm": group_norm,
        "batch_norm": batch_norm,
        "instance_norm": instance_norm,
        "sinkhorn_step": sinkhorn_step,
        "sinkhorn_iteration": sinkhorn_iteration,
        "sinkhorn_two_iterations": sinkhorn_two_iterations,
    }


def summarize(samples_us):
    if not samples_us:
        return {"runs": 0, "median_us": None, "min_us": None}
    return {"runs": len(samples_us), "median_us": statistics.median(samples_us), "min_us": min(samples_us)}


def short_error(error):
    """The exception's type and first lines: enough to see why, small enough for a table."""
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    lines = text.splitlines()
    return " / ".join(lines[:3])[:500]


class Timer:
    """Times callables on the device: warm-up, then runs each preceded by an L2 flush,
    with CUDA events around the call alone (wall clock on the CPU)."""

    def __init__(self, torch, device, warmup, runs):
        self.torch = torch
        self.device = device
        self.warmup = warmup
        self.runs = runs
        self.flush_buffer = None
        self.flush_bytes = 0
        if device == "cuda":
            props = torch.cuda.get_device_properties(0)
            l2 = int(getattr(props, "L2_cache_size", 0) or 0)
            self.flush_bytes = max(4 * l2, 256 << 20)
            self.flush_buffer = torch.empty(self.flush_bytes, dtype=torch.uint8, device="cuda")
        self.flush_count = 0

    def flush(self):
        if self.flush_buffer is not None:
            self.flush_count = (self.flush_count + 1) % 251
            self.flush_buffer.fill_(self.flush_count + 1)

    def synchronize(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def time(self, fn, args):
        for _ in range(self.warmup):
            fn(*args)
        self.synchronize()
        if self.device != "cuda":
            samples = []
            for _ in range(self.runs):
                start = time.perf_counter()
                fn(*args)
                samples.append((time.perf_counter() - start) * 1e6)
            return summarize(samples)
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(self.runs)]
        ends = [cuda.Event(enable_timing=True) for _ in range(self.runs)]
        for i in range(self.runs):
            self.flush()
            starts[i].record()
            fn(*args)
            ends[i].record()
        cuda.synchronize()
        return summarize([s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)])

    def time_wall(self, fn, args, wait):
        """For JAX, whose work the torch events cannot see: the flush is finished first,
        then the host clock runs from the call until `wait` returns (dispatch included)."""
        for _ in range(self.warmup):
            wait(fn(*args))
        samples = []
        for _ in range(self.runs):
            self.flush()
            self.synchronize()
            start = time.perf_counter()
            wait(fn(*args))
            samples.append((time.perf_counter() - start) * 1e6)
        return summarize(samples)


def relative_difference(torch, results, reference):
    """Largest relative L2 difference between two tuples of outputs, in float64."""
    worst = 0.0
    for a, b in zip(results, reference):
        a64 = a.detach().to(torch.float64)
        b64 = b.detach().to(torch.float64)
        denominator = float(torch.linalg.vector_norm(b64))
        difference = float(torch.linalg.vector_norm(a64 - b64))
        worst = max(worst, difference / denominator if denominator > 0 else difference)
    return worst


def make_inputs(torch, graph, rows, cols, dtype, device, seed, dims=None):
    generator = torch.Generator(device="cpu")
    generator.manual_seed(seed)
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    tensors = []
    for _, kind in INPUTS[graph]:
        shape = (
            tuple(dims)
            if kind == "d"
            else (dims[-1],) if kind == "dv" else (dims[1],) if kind == "dc" else (rows, cols) if kind == "m" else (cols,)
        )
        values = torch.rand(shape, generator=generator, dtype=torch.float32) * 4.0 - 2.0
        tensors.append(values.to(device=device, dtype=torch_dtype))
    return tensors


def measure_copy(torch, timer, device, quick):
    if device != "cuda":
        nbytes = 16 << 20  # a dry run: enough to exercise the code
    else:
        nbytes = (256 << 20) if quick else (1 << 30)
    source = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(0x5A)
    target = torch.empty_like(source)
    timing = timer.time(lambda: target.copy_(source), ())
    median = timing["median_us"]
    timing["bytes_moved"] = 2 * nbytes
    timing["gb_per_s"] = 2 * nbytes / median / 1e3 if median else None
    del source, target
    return timing


class Baseline:
    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        self.doc = {
            "tool": "torch_baseline",
            "device": args.device,
            "mode": "quick" if args.quick else "full",
            "runs": args.runs,
            "warmup": args.warmup,
            "modes": args.modes,
            "errors": [],
            "cases": [],
        }

    def out_of_time(self):
        budget = self.args.time_budget
        return budget > 0 and time.monotonic() - self.started > budget

    def save(self):
        self.doc["elapsed_s"] = time.monotonic() - self.started
        if not self.args.output:
            return
        temporary = self.args.output + ".tmp"
        with open(temporary, "w") as out:
            json.dump(self.doc, out, indent=1)
            out.write("\n")
        os.replace(temporary, self.args.output)

    def progress(self, line):
        print(f"[torch-baseline {time.monotonic() - self.started:6.1f}s] {line}", file=sys.stderr, flush=True)


def load_jax(baseline, device):
    """jax and its graphs, or None with the reason recorded; never raises."""
    if "jax" not in baseline.args.modes:
        return None
    try:
        # JAX takes most of the GPU's memory at start unless told otherwise.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        import jax.numpy as jnp

        platform = jax.default_backend()
        baseline.doc["jax_version"] = jax.__version__
        baseline.doc["jax_backend"] = platform
        if device == "cuda" and platform != "gpu":
            baseline.doc["jax_error"] = f"jax runs on {platform}, not the GPU"
            return None
        return jax, jnp, jax_graphs(jax, jnp)
    except Exception as error:  # any import or plugin failure only drops the JAX column
        baseline.doc["jax_error"] = short_error(error)
        return None


def results_line(results):
    """Each mode's median or error, for a progress line."""
    return ", ".join(
        f"{m} {r['median_us']:.1f} us" if r.get("median_us") is not None else f"{m} error: {r.get('error')}"
        for m, r in results.items()
    )


def run_case(torch, baseline, timer, graphs, jax_parts, graph, rows, cols, dtype, seed, dims=None):
    """One graph at one shape; a reduction graph at the input shape `dims` (rows and cols are
    then its elements over its last axis and that axis, as fstitch_bench_gpu writes them)."""
    args = baseline.args
    case = {
        "graph": graph,
        "rows": rows,
        "cols": cols,
        "dtype": dtype,
        "lower_bound_bytes": lower_bound_bytes(graph, rows, cols, dtype, dims),
        "results": {},
    }
    if dims:
        case["dims"] = list(dims)
    baseline.doc["cases"].append(case)
    results = case["results"]
    inputs = make_inputs(torch, graph, rows, cols, dtype, args.device, seed, dims)
    fn = graphs[graph]
    reference = fn(*inputs)
    timer.synchronize()
    for mode in args.modes:
        if baseline.out_of_time():
            results[mode] = {"error": "skipped: time budget of %gs spent" % args.time_budget}
            continue
        try:
            if mode == "eager":
                results[mode] = timer.time(fn, inputs)
            elif mode in ("compile", "max_autotune"):
                options = {"dynamic": False}
                if mode == "max_autotune":
                    options["mode"] = "max-autotune-no-cudagraphs"
                compiled = torch.compile(fn, **options)
                start = time.perf_counter()
                first = compiled(*inputs)
                timer.synchronize()
                compile_s = time.perf_counter() - start
                timing = timer.time(compiled, inputs)
                timing["compile_s"] = compile_s
                timing["rel_diff_vs_eager"] = relative_difference(torch, first, reference)
                results[mode] = timing
            elif mode == "jax":
                if jax_parts is None:
                    results[mode] = {"error": baseline.doc.get("jax_error", "jax unavailable")}
                    continue
                jax, jnp, jgraphs = jax_parts
                jdtype = jnp.float32 if dtype == "f32" else jnp.bfloat16
                jinputs = [jnp.asarray(t.float().cpu().numpy()).astype(jdtype) for t in inputs]
                jitted = jax.jit(jgraphs[graph])
                start = time.perf_counter()
                jax.block_until_ready(jitted(*jinputs))
                compile_s = time.perf_counter() - start
                timing = timer.time_wall(jitted, jinputs, jax.block_until_ready)
                timing["compile_s"] = compile_s
                timing["timed_with"] = "host clock, dispatch included"
                results[mode] = timing
                del jinputs
        except Exception as error:  # one failing mode must not end the run
            results[mode] = {"error": short_error(error)}
        baseline.save()
    baseline.progress(f"{graph} {shape_text(rows, cols, dims)} {dtype}: {results_line(results)}")
    del inputs, reference


def lamb_foreach_step(torch, params, grads, exp_avgs, exp_avg_sqs):
    """One LAMB step in place, as packed_graphs.cpp's lamb_step computes it: the Adam moments
    and the decoupled-weight-decay update u (bias corrections of step LAMB["step"]), then
    p -= lr * ratio * u with ratio = |p| / |u| per tensor (1 where either norm is 0). Written
    with torch's multi-tensor operations, a few launches per operation over all tensors."""
    beta1, beta2 = LAMB["betas"]
    correction1 = 1 - beta1 ** LAMB["step"]
    correction2 = 1 - beta2 ** LAMB["step"]
    torch._foreach_mul_(exp_avgs, beta1)
    torch._foreach_add_(exp_avgs, grads, alpha=1 - beta1)
    torch._foreach_mul_(exp_avg_sqs, beta2)
    torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1 - beta2)
    denominators = torch._foreach_div(exp_avg_sqs, correction2)
    torch._foreach_sqrt_(denominators)
    torch._foreach_add_(denominators, LAMB["eps"])
    updates = torch._foreach_div(exp_avgs, correction1)
    torch._foreach_div_(updates, denominators)
    torch._foreach_add_(updates, params, alpha=LAMB["weight_decay"])
    p_norms = torch.stack(torch._foreach_norm(params))
    u_norms = torch.stack(torch._foreach_norm(updates))
    ratios = torch.where((p_norms > 0) & (u_norms > 0), p_norms / u_norms, torch.ones_like(p_norms))
    torch._foreach_mul_(updates, list(torch.unbind(ratios * -LAMB["lr"])))
    torch._foreach_add_(params, updates)


def run_optimizer_case(torch, baseline, timer, graph, dims, seed):
    """A multi-tensor optimizer step, f32, in each of OPTIMIZER_MODES the run asked for
    (AdamW's "fused" whenever eager mode runs; LAMB has no fused form): every mode starts from
    the same parameters, gradients and moments, and its parameters after one step are compared
    with eager mode's."""
    args = baseline.args
    sizes = transformer_parameter_sizes(dims[0])
    case = {
        "graph": graph,
        "rows": 1,
        "cols": dims[0],
        "dims": list(dims),
        "dtype": "f32",
        "lower_bound_bytes": lower_bound_bytes(graph, 1, dims[0], "f32", dims),
        "results": {},
    }
    baseline.doc["cases"].append(case)
    results = case["results"]
    generator = torch.Generator(device="cpu")
    generator.manual_seed(seed)
    # p and g in [-2, 2); LAMB's moments m in [-2, 2) and v in [0, 1) (AdamW's start at zero).
    initial = [[torch.rand((n,), generator=generator, dtype=torch.float32) * 4.0 - 2.0 for _ in range(3)] +
               [torch.rand((n,), generator=generator, dtype=torch.float32)] for n in sizes]

    def on_device(t):
        return t.to(device=args.device).clone()

    def optimizer(**implementation):
        """The step function of a fresh optimizer state, and its parameters."""
        if graph == "lamb_step":
            params, grads, exp_avgs, exp_avg_sqs = ([on_device(tensors[i]) for tensors in initial] for i in range(4))
            return lambda: lamb_foreach_step(torch, params, grads, exp_avgs, exp_avg_sqs), params
        params = []
        for p, g, _, _ in initial:
            param = torch.nn.Parameter(on_device(p))
            param.grad = on_device(g)
            params.append(param)
        return torch.optim.AdamW(params, **ADAMW, **implementation).step, params

    after_eager = None
    fused_mode = graph == "adamw_step" and "eager" in args.modes
    modes = [m for m in OPTIMIZER_MODES if m in args.modes or (m == "fused" and fused_mode)]
    for mode in modes:
        if baseline.out_of_time():
            results[mode] = {"error": "skipped: time budget of %gs spent" % args.time_budget}
            continue
        try:
            step, params = optimizer(fused=True) if mode == "fused" else optimizer(foreach=True)
            start = time.perf_counter()
            if mode == "compile":
                step = torch.compile(step)
            step()
            timer.synchronize()
            first_s = time.perf_counter() - start
            after_first = [p.detach().clone() for p in params]
            timing = timer.time(step, [])
            if mode == "compile":
                timing["compile_s"] = first_s
            if mode == "eager":
                after_eager = after_first
            elif after_eager is not None:
                timing["rel_diff_vs_eager"] = relative_difference(torch, after_first, after_eager)
            results[mode] = timing
            del step, params, after_first
        except Exception as error:  # one failing mode must not end the run
            results[mode] = {"error": short_error(error)}
        baseline.save()
    baseline.progress(f"{graph} {dims[0]} tensors ({sum(sizes)} elements) f32: {results_line(results)}")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", help="JSON results file (rewritten after every case)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--quick", action="store_true", help="4096x1024 only, fewer runs")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per case (default 50, quick 20)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed runs first (default 5, quick 3)")
    parser.add_argument(
        "--modes",
        default=None,
        help="comma-separated among %s (default: eager,compile,jax; eager alone on the CPU)" % ",".join(ALL_MODES),
    )
    parser.add_argument("--graphs", default=None,
                        help="comma-separated graph names (default: the six canonical graphs and the reduction graphs)")
    parser.add_argument("--shapes", default=None, help="comma-separated ROWSxCOLS (default by mode)")
    parser.add_argument("--reduction-dims", default=None,
                        help="NAME=AxB[xC],... input shapes of the reductions, adamw_step=N and lamb_step=N their tensor counts "
                        "(default: their benchmark shapes)")
    parser.add_argument("--time-budget", type=float, default=0, help="seconds; later modes are skipped after it")
    args = parser.parse_args(argv)
    args.runs = args.runs if args.runs is not None else (20 if args.quick else 50)
    args.warmup = args.warmup if args.warmup is not None else (3 if args.quick else 5)
    default_modes = "eager,compile,jax" if args.device == "cuda" else "eager"
    args.modes = [m for m in (args.modes or default_modes).split(",") if m]
    for mode in args.modes:
        if mode not in ALL_MODES:
            parser.error(f"unknown mode {mode!r}; choose among {', '.join(ALL_MODES)}")
    args.graphs = [g for g in (args.graphs or ",".join(ALL_GRAPHS)).split(",") if g]
    for graph in args.graphs:
        if graph not in ALL_GRAPHS:
            parser.error(f"unknown graph {graph!r}; choose among {', '.join(ALL_GRAPHS)}")
    given = args.reduction_dims
    args.reduction_dims = dict(SHAPED)
    for item in (given or "").split(","):
        if not item:
            continue
        name, _, text = item.partition("=")
        try:
            dims = tuple(int(d) for d in text.lower().split("x"))
            if name not in SHAPED or len(dims) != len(SHAPED[name]) or min(dims) < 1:
                raise ValueError
        except ValueError:
            parser.error("--reduction-dims takes NAME=AxB[xC] with a reduction's name and its rank, "
                         "or an optimizer step's NAME=N (its tensor count)")
        args.reduction_dims[name] = dims
    if args.shapes:
        try:
            args.shapes = [tuple(int(d) for d in s.lower().split("x")) for s in args.shapes.split(",") if s]
            if any(len(s) != 2 or min(s) < 1 for s in args.shapes):
                raise ValueError
        except ValueError:
            parser.error("--shapes takes ROWSxCOLS[,ROWSxCOLS...]")
    else:
        args.shapes = SHAPES["quick" if args.quick else "full"]
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    baseline = Baseline(args)
    try:
        import torch
    except Exception as error:
        baseline.doc["errors"].append("torch does not import: " + short_error(error))
        baseline.save()
        print("torch_baseline: torch does not import: " + short_error(error), file=sys.stderr)
        return 2
    baseline.doc["torch_version"] = torch.__version__
    if args.device == "cuda" and not torch.cuda.is_available():
        baseline.doc["errors"].append("torch sees no CUDA device")
        baseline.save()
        print("torch_baseline: torch sees no CUDA device (use --device cpu for a dry run)", file=sys.stderr)
        return 2
    if args.device == "cuda":
        baseline.doc["device_name"] = torch.cuda.get_device_name(0)
        baseline.doc["torch_cuda"] = torch.version.cuda
    # One compiled graph per shape and dtype: allow more recompiles than the default limit.
    dynamo_config = getattr(getattr(torch, "_dynamo", None), "config", None)
    for name in ("cache_size_limit", "recompile_limit"):
        if dynamo_config is not None and hasattr(dynamo_config, name):
            setattr(dynamo_config, name, max(64, getattr(dynamo_config, name)))

    timer = Timer(torch, args.device, args.warmup, args.runs)
    baseline.doc["flush_bytes"] = timer.flush_bytes
    try:
        baseline.doc["copy"] = measure_copy(torch, timer, args.device, args.quick)
        baseline.progress(f"device-to-device copy: {baseline.doc['copy']['gb_per_s']:.0f} GB/s")
    except Exception as error:
        baseline.doc["copy"] = {"error": short_error(error)}
    baseline.save()

    graphs = torch_graphs(torch)
    jax_parts = load_jax(baseline, args.device)
    seed = 1
    for rows, cols in args.shapes:
        for dtype in DTYPES:
            for graph in [g for g in args.graphs if g in GRAPHS]:
                seed += 1
                try:
                    run_case(torch, baseline, timer, graphs, jax_parts, graph, rows, cols, dtype, seed)
                except Exception as error:  # inputs that do not fit, say: record and go on
                    baseline.doc["errors"].append(f"{graph} {rows}x{cols} {dtype}: {short_error(error)}")
                    baseline.progress(f"{graph} {rows}x{cols} {dtype}: ERROR {short_error(error)}")
                baseline.save()
    for graph in [g for g in args.graphs if g in REDUCTIONS]:
        dims = args.reduction_dims[graph]
        for dtype in DTYPES:
            seed += 1
            label = f"{graph} {shape_text(0, 0, dims)} {dtype}"
            try:
                run_case(torch, baseline, timer, graphs, jax_parts, graph, element_count(dims) // dims[-1], dims[-1],
                         dtype, seed, dims)
            except Exception as error:
                baseline.doc["errors"].append(f"{label}: {short_error(error)}")
                baseline.progress(f"{label}: ERROR {short_error(error)}")
            baseline.save()
    for graph in [g for g in args.graphs if g in OPTIMIZERS]:
        seed += 1
        dims = args.reduction_dims[graph]
        try:
            run_optimizer_case(torch, baseline, timer, graph, dims, seed)
        except Exception as error:
            baseline.doc["errors"].append(f"{graph} {dims[0]} f32: {short_error(error)}")
            baseline.progress(f"{graph} {dims[0]} f32: ERROR {short_error(error)}")
        baseline.save()
    failed = [
        f"{c['graph']} {shape_text(c['rows'], c['cols'], c.get('dims'))} {c['dtype']} {mode}"
        for c in baseline.doc["cases"]
        for mode, r in c["results"].items()
        if "error" in r
    ]
    baseline.progress(f"done: {len(baseline.doc['cases'])} cases, {len(failed)} mode(s) without a time")
    baseline.save()
    return 0 if not baseline.doc["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
