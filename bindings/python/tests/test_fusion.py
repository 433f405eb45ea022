"""Fusing, inspecting kernels and running on the host backend, against numpy and the reference."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import F32_LIMIT, HALF_LIMIT, assert_close, layer_norm, softmax

import fstitch
from fstitch import LaunchKind, ParamKind


def build_layer_norm(g, rows, cols, dtype="f32"):
    x = g.input("x", dtype, (rows, cols))
    w = g.input("w", dtype, cols)
    b = g.input("b", dtype, cols)
    xf = x.cast("f32")
    mean = xf.mean(axis=-1, keepdims=True)
    centered = xf - mean
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    y = centered * (variance + 1e-5).rsqrt() * w.cast("f32") + b.cast("f32")
    g.output("y", y.cast(dtype))


def build_softmax(g, rows, cols, dtype="f32"):
    x = g.input("x", dtype, (rows, cols))
    xf = x.cast("f32")
    e = (xf - xf.max(axis=1, keepdims=True)).exp()
    g.output("y", (e / e.sum(axis=1, keepdims=True)).cast(dtype))


@pytest.fixture(scope="module")
def layer_norm_graph(ctx):
    g = ctx.graph()
    build_layer_norm(g, 32, 96)
    yield g
    g.close()


@pytest.fixture
def layer_norm_inputs(rng):
    return {
        "x": rng.standard_normal((32, 96), dtype=np.float32),
        "w": rng.standard_normal(96, dtype=np.float32),
        "b": rng.standard_normal(96, dtype=np.float32),
    }


@pytest.mark.parametrize("policy", ["stitch", "loop", "none", fstitch.Policy.STITCH])
def test_layer_norm_matches_numpy(layer_norm_graph, layer_norm_inputs, policy):
    fusion = layer_norm_graph.fuse(policy=policy)
    result = fusion.run(**layer_norm_inputs)
    expected = layer_norm(layer_norm_inputs["x"], layer_norm_inputs["w"], layer_norm_inputs["b"])
    assert_close(result["y"], expected, F32_LIMIT)
    assert_close(layer_norm_graph.evaluate(layer_norm_inputs)["y"], expected, F32_LIMIT)


def test_policies_change_the_kernel_count(layer_norm_graph):
    counts = {
        policy: len(layer_norm_graph.fuse(policy=policy).kernels)
        for policy in ("stitch", "loop", "none")
    }
    assert counts["stitch"] == 1
    assert counts["stitch"] < counts["loop"] < counts["none"]


def test_softmax_matches_numpy(ctx, rng):
    g = ctx.graph()
    build_softmax(g, 24, 80)
    data = rng.standard_normal((24, 80), dtype=np.float32) * 4
    fusion = g.fuse()
    assert len(fusion.kernels) == 1
    assert_close(fusion.run([data])[0], softmax(data), F32_LIMIT)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_runs_match_the_reference(ctx, rng, dtype):
    g = ctx.graph()
    build_layer_norm(g, 16, 64, dtype)
    inputs32 = [
        rng.standard_normal((16, 64), dtype=np.float32),
        rng.standard_normal(64, dtype=np.float32),
        rng.standard_normal(64, dtype=np.float32),
    ]
    if dtype == "f16":
        inputs = [a.astype(np.float16) for a in inputs32]
        as_float = lambda a: a.astype(np.float64)  # noqa: E731
    else:
        inputs = [fstitch.to_bf16_bits(a) for a in inputs32]
        as_float = fstitch.from_bf16_bits
    fusion = g.fuse()
    result = fusion.run(inputs)[0]
    reference = g.evaluate(inputs)[0]
    assert result.dtype == reference.dtype
    assert_close(as_float(result), as_float(reference), HALF_LIMIT)
    assert_close(as_float(result), layer_norm(*[as_float(a) for a in inputs]), HALF_LIMIT)


def test_run_argument_forms_and_given_outputs(layer_norm_graph, layer_norm_inputs):
    fusion = layer_norm_graph.fuse()
    expected = fusion.run(**layer_norm_inputs)["y"]
    ordered = [layer_norm_inputs[name] for name in fusion.input_names]
    np.testing.assert_array_equal(fusion.run(layer_norm_inputs)["y"], expected)
    np.testing.assert_array_equal(fusion.run(ordered)[0], expected)
    np.testing.assert_array_equal(fusion.run(*ordered)[0], expected)
    out = np.full((32, 96), np.nan, np.float32)
    assert fusion.run(ordered, outputs=[out])[0] is out
    np.testing.assert_array_equal(out, expected)
    out[:] = np.nan
    assert fusion.run(**layer_norm_inputs, outputs={"y": out})["y"] is out
    np.testing.assert_array_equal(out, expected)
    # Non-contiguous inputs are copied.
    strided = {**layer_norm_inputs, "x": np.asfortranarray(layer_norm_inputs["x"])}
    np.testing.assert_array_equal(fusion.run(**strided)["y"], expected)
    # A stream argument is accepted and ignored on the host backend.
    np.testing.assert_array_equal(fusion.run(**layer_norm_inputs, stream=0)["y"], expected)


def test_workspace(ctx, rng):
    g = ctx.graph()
    x = g.input("x", "f32", (8, 64))
    g.output("y", (x.exp().sum(axis=1, keepdims=True) * x).sin())
    fusion = g.fuse(policy="none")
    size = fusion.workspace_size
    assert size > 0
    data = rng.standard_normal((8, 64), dtype=np.float32)
    expected = np.sin(np.exp(data.astype(np.float64)).sum(axis=1, keepdims=True) * data)
    assert_close(fusion.run(x=data)["y"], expected)
    workspace = np.zeros(size, np.uint8)
    assert_close(fusion.run(x=data, workspace=workspace)["y"], expected)
    assert workspace.any()  # the intermediates went there
    assert_close(fusion.run(x=data, workspace=workspace.ctypes.data)["y"], expected)


def test_fusion_description(layer_norm_graph):
    fusion = layer_norm_graph.fuse(target=80, shared_memory=64 * 1024, registers=128)
    assert fusion.input_names == ["x", "w", "b"] and fusion.output_names == ["y"]
    assert fusion.input_specs[0] == fstitch.TensorSpec("x", fstitch.f32, (32, 96))
    assert "sm_80" in fusion.plan and "kernel 0" in fusion.plan
    assert fusion.planned_bytes >= fusion.lower_bound_bytes == (32 * 96 * 2 + 96 * 2) * 4
    assert fusion.workspace_size == 0
    assert "kernels=1" in repr(fusion)


def test_device_model(layer_norm_graph):
    fusion = layer_norm_graph.fuse(device="h200")
    assert "target sm_90 (H200 SXM)" in fusion.plan
    assert "target sm_80 (A100 SXM)" in layer_norm_graph.fuse(device="a100").plan
    with pytest.raises(fstitch.Error) as e:
        layer_norm_graph.fuse(device="h300")
    assert e.value.status == fstitch.Status.UNSUPPORTED and "h300" in str(e.value)
    with pytest.raises(fstitch.Error) as e:
        layer_norm_graph.fuse(device=200)
    assert e.value.status == fstitch.Status.INVALID_ARGUMENT


def test_kernel_inspection(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", (4, 256))
    w = g.input("w", "f32", 256)
    g.output("y", (x * w).sum(axis=1))
    g.output("z", x.exp())
    fusion = g.fuse(policy="none")
    kernels = fusion.kernels
    assert len(kernels) >= 3
    seen_inputs, seen_outputs = set(), set()
    for index, kernel in enumerate(kernels):
        assert kernel.index == index and kernel.fusion is fusion
        assert kernel.name in kernel.source and "__global__" in kernel.source
        config = kernel.launch_config
        assert len(config.grid) == 3 and len(config.block) == 3 and config.shared >= 0
        assert all(isinstance(d, int) and d >= 1 for d in config.grid + config.block)
        read, written = kernel.estimated_bytes
        assert read > 0 and written > 0
        assert kernel.launch_kind is LaunchKind.REGULAR
        for param in kernel.params:
            assert param.kind in (ParamKind.INPUT, ParamKind.OUTPUT, ParamKind.WORKSPACE)
            if param.kind is ParamKind.INPUT:
                seen_inputs.add(param.index)
                assert (
                    param.value is not None and param.value.name == fusion.input_names[param.index]
                )
            elif param.kind is ParamKind.OUTPUT:
                seen_outputs.add(param.index)
                assert param.value.handle == g.outputs[fusion.output_names[param.index]].handle
            else:
                assert 0 <= param.index < fusion.workspace_size
    assert seen_inputs == {0, 1} and seen_outputs == {0, 1}
    with pytest.raises(fstitch.Error) as caught:
        _ = kernels[0].function
    assert caught.value.status is fstitch.Status.UNSUPPORTED
    g.close()
    assert all(
        param.value is None for param in kernels[0].params
    )  # the graph is gone; handles remain
    assert kernels[0].params[0].handle != 0


def test_grid_for_occupancy_is_a_wave_or_the_work_units(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", (8192, 1024))
    g.output("y", x * 2.0 + 1.0)
    (kernel,) = g.fuse().kernels
    planned = kernel.launch_config.grid
    all_work = kernel.grid_for_occupancy(2**20, 2**11)
    assert all_work[1:] == (1, 1) and all_work[0] >= planned[0]
    assert kernel.grid_for_occupancy(12, 132) == (min(12 * 132, all_work[0]), 1, 1)
    assert kernel.grid_for_occupancy(1, 1) == (1, 1, 1)
    for blocks, sms, detail in [
        (0, 132, "blocks_per_multiprocessor"),
        (4, 0, "multiprocessors"),
        (-1, 132, "blocks_per_multiprocessor"),
        (4, 2**32, "multiprocessors"),
        (4.0, 132, "blocks_per_multiprocessor"),
    ]:
        with pytest.raises(fstitch.Error) as caught:
            kernel.grid_for_occupancy(blocks, sms)
        assert caught.value.status is fstitch.Status.INVALID_ARGUMENT
        assert detail in caught.value.message


def _compiled_ptx(kernel):
    try:
        return kernel.ptx
    except fstitch.Error as error:
        if error.status is fstitch.Status.NO_COMPILER:
            pytest.skip(f"no NVRTC: {error.message}")
        raise


@pytest.mark.parametrize("target", [80, 90])
def test_ptx_and_cubin(ctx, target):
    g = ctx.graph()
    x = g.input("x", "f32", (4, 128))
    g.output("y", x.exp().sum(axis=1))
    fusion = g.fuse(target=target)
    kernel = fusion.kernels[0]
    ptx = _compiled_ptx(kernel)
    assert f".target sm_{target}" in ptx
    assert f".entry {kernel.name}" in ptx
    cubin = kernel.cubin
    assert cubin[:4] == b"\x7fELF"


def test_a_split_column_reduction_clears_its_counters(ctx, rng):
    g = ctx.graph()
    x = g.input("x", "f32", (4096, 40))
    g.output("r", x.sum(axis=0))
    fusion = g.fuse()
    (kernel,) = fusion.kernels
    offset, size = kernel.zeroed_workspace
    assert size > 0 and offset + size <= fusion.workspace_size
    scratch = [p for p in kernel.params if p.kind is ParamKind.WORKSPACE]
    assert scratch and all(p.value is None for p in scratch)
    data = rng.standard_normal((4096, 40), dtype=np.float32)
    expected = data.astype(np.float64).sum(axis=0)
    # Garbage in the workspace: the run and the launch clear the counters themselves.
    workspace = np.full(fusion.workspace_size, 0xFF, np.uint8)
    assert_close(fusion.run(x=data, workspace=workspace)["r"], expected)
    workspace[:] = 0xFF
    r = np.full(40, np.nan, np.float32)
    args = []
    for param in kernel.params:
        if param.kind is ParamKind.INPUT:
            args.append(data)
        elif param.kind is ParamKind.OUTPUT:
            args.append(r)
        else:
            args.append(workspace.ctypes.data + param.index)
    kernel.launch(args)
    assert_close(r, expected)
    g2 = ctx.graph()
    y = g2.input("y", "f32", (8, 8))
    g2.output("z", y.exp())
    assert g2.fuse().kernels[0].zeroed_workspace == (0, 0)


def test_launching_kernels_one_by_one_around_an_opaque_operation(ctx, rng):
    g = ctx.graph()
    a = g.input("a", "f32", (3, 5))
    product = g.opaque("matmul", [a, a.T], "f32", (3, 3))
    g.output("y", product.tanh())
    fusion = g.fuse()
    workspace = np.zeros(fusion.workspace_size, np.uint8)
    base = workspace.ctypes.data
    data = rng.standard_normal((3, 5), dtype=np.float32)
    y = np.full((3, 3), np.nan, np.float32)
    # The plan's text says where the opaque operation's result goes in the workspace.
    opaque_line = next(
        line for line in fusion.plan.splitlines() if "opaque" in line and "workspace+" in line
    )
    result_offset = int(opaque_line.rsplit("workspace+", 1)[1].split()[0])
    transposed_offset = None
    for kernel in fusion.kernels:
        args = []
        for param in kernel.params:
            if param.kind is ParamKind.INPUT:
                args.append(data)
            elif param.kind is ParamKind.OUTPUT:
                args.append(y)
            else:
                args.append(base + param.index)
                if param.index != result_offset:
                    transposed_offset = param.index
        if all(p.kind is not ParamKind.INPUT for p in kernel.params):
            # Before the kernel that reads the opaque result: run the "matmul" ourselves.
            transposed = np.frombuffer(workspace, np.float32, 15, transposed_offset).reshape(5, 3)
            np.testing.assert_array_equal(transposed, data.T)
            result = np.frombuffer(workspace, np.float32, 9, result_offset).reshape(3, 3)
            result[:] = data @ transposed
        kernel.launch(args)
    assert_close(y, np.tanh(data.astype(np.float64) @ data.T.astype(np.float64)))


def test_kernel_launch_errors(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 4)
    g.output("y", x.exp())
    kernel = g.fuse().kernels[0]
    with pytest.raises(fstitch.Error, match="1 argument\\(s\\) given"):
        kernel.launch([np.ones(4, np.float32)])
    with pytest.raises(fstitch.Error, match="argument 0 \\(input 0\\) has shape \\(5,\\)"):
        kernel.launch([np.ones(5, np.float32), np.ones(4, np.float32)])
    with pytest.raises(fstitch.Error, match="argument 0 \\(input 0\\) address is NULL"):
        kernel.launch([0, np.ones(4, np.float32)])
    out = np.zeros(4, np.float32)
    kernel.launch([np.ones(4, np.float32), out])
    assert_close(out, np.full(4, np.e))


def test_a_fusion_outlives_its_graph_and_context(cache_dir, rng):
    context = fstitch.Context(backend="host", cache_dir=cache_dir)
    g = context.graph()
    build_softmax(g, 4, 32)
    fusion = g.fuse()
    g.close()
    context.close()
    data = rng.standard_normal((4, 32), dtype=np.float32)
    assert_close(fusion.run(x=data)["y"], softmax(data))
    assert fusion.context is context


def test_concurrent_runs(layer_norm_graph, rng):
    fusion = layer_norm_graph.fuse()
    inputs = [
        {
            "x": rng.standard_normal((32, 96), dtype=np.float32),
            "w": rng.standard_normal(96, dtype=np.float32),
            "b": rng.standard_normal(96, dtype=np.float32),
        }
        for _ in range(4)
    ]
    fusion.run(**inputs[0])  # compiled once before the threads start
    results = [None] * len(inputs)
    errors = []

    def work(i):
        try:
            results[i] = fusion.run(**inputs[i])["y"]
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for data, result in zip(inputs, results):
        assert_close(result, layer_norm(data["x"], data["w"], data["b"]))


def test_two_long_rows_are_split_across_clusters_of_blocks(ctx, rng):
    g = ctx.graph()
    build_softmax(g, 2, 20000)
    fusion = g.fuse()
    (kernel,) = fusion.kernels
    # Two rows cannot fill an sm_90 device with a block each: clusters of blocks split them.
    assert kernel.launch_kind is LaunchKind.CLUSTER, fusion.dump()
    assert 2 <= kernel.cluster_blocks <= 8
    assert kernel.launch_config.grid[0] % kernel.cluster_blocks == 0
    assert kernel.zeroed_workspace[1] == 0  # partials in distributed shared memory
    data = rng.standard_normal((2, 20000), dtype=np.float32)
    assert_close(fusion.run([data])[0], softmax(data), F32_LIMIT)
    g2 = ctx.graph()
    y = g2.input("y", "f32", (8, 8))
    g2.output("z", y.exp())
    assert g2.fuse().kernels[0].cluster_blocks == 1


def test_compile_stats_count_compiles_and_disk_hits(tmp_path, rng):
    # A fresh cache directory: the first context compiles, a second one loads from disk.
    data = rng.standard_normal((4, 32), dtype=np.float32)
    first = fstitch.Context(backend="host", cache_dir=tmp_path, log_level="error")
    g = first.graph()
    build_softmax(g, 4, 32)
    fusion = g.fuse()
    assert fusion.compile_stats() == fstitch.CompileStats(0, 0, 0, 0, 0, 0.0)
    before = first.compile_stats()
    assert_close(fusion.run(x=data)["y"], softmax(data))
    stats = fusion.compile_stats()
    assert (stats.compiled, stats.disk_hits, stats.disk_writes) == (1, 0, 1)
    assert stats.compile_seconds > 0
    assert "1 compiled in" in str(stats)
    assert first.compile_stats() - before == stats

    second = fstitch.Context(backend="host", cache_dir=tmp_path, log_level="error")
    g2 = second.graph()
    build_softmax(g2, 4, 32)
    again = g2.fuse()
    assert_close(again.run(x=data)["y"], softmax(data))
    stats = again.compile_stats()
    assert (stats.compiled, stats.disk_hits, stats.compile_seconds) == (0, 1, 0.0)
    assert str(stats) == "0 compiled in 0.00 s, 1 from the disk cache"
    assert second.compile_stats() == stats
