"""Steps and opaque operations: a block with two matmuls left to a Python callable, its steps
checked against every dependency, fused runs on the host backend compared with the
reference evaluator through the same callable, and every way a callable can fail."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

import fstitch
from fstitch import DType, ParamKind, Status, StepKind

ROWS, MODEL, HIDDEN = 4, 8, 6
POLICIES = ["stitch", "loop", "none"]


def build_block(g):
    """x f32[4,8], w1 f32[8,6], w2 f32[6,8]:
    h = matmul(x * 0.5, w1); t = tanh(h); o = matmul(t, w2); y = o + x; outputs y and h."""
    x = g.input("x", "f32", (ROWS, MODEL))
    w1 = g.input("w1", "f32", (MODEL, HIDDEN))
    w2 = g.input("w2", "f32", (HIDDEN, MODEL))
    h = g.opaque("matmul", [x * 0.5, w1], "f32", (ROWS, HIDDEN))
    o = g.opaque("matmul", [h.tanh(), w2], "f32", (ROWS, MODEL))
    g.output("y", o + x)
    g.output("h", h)
    return h, o


@pytest.fixture
def block(ctx):
    g = ctx.graph()
    h, o = build_block(g)
    yield g, h, o
    g.close()


@pytest.fixture
def data(rng):
    return {
        "x": rng.uniform(-1, 1, (ROWS, MODEL)).astype(np.float32),
        "w1": rng.uniform(-1, 1, (MODEL, HIDDEN)).astype(np.float32),
        "w2": rng.uniform(-1, 1, (HIDDEN, MODEL)).astype(np.float32),
    }


class Matmul:
    """An opaque callable that runs "matmul" with numpy and records what it saw."""

    def __init__(self):
        self.calls = []

    def __call__(self, call):
        self.calls.append(call)
        assert call.name == "matmul" and len(call.operands) == 2
        a, b = call.operands
        assert not a.flags.writeable and not b.flags.writeable
        assert call.result.flags.writeable
        assert call.operand_dtypes == (DType.F32, DType.F32) and call.result_dtype is DType.F32
        assert call.stream == 0  # the host backend and the reference have no stream
        np.matmul(a, b, out=call.result)


def expected_block(data):
    x, w1, w2 = (data[name].astype(np.float64) for name in ("x", "w1", "w2"))
    h = (x * 0.5) @ w1
    return {"y": np.tanh(h) @ w2 + x, "h": h}


# -- steps ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_steps_follow_every_dependency(block, policy):
    g, h, o = block
    fusion = g.fuse(policy=policy)
    steps = fusion.steps
    ops = fusion.opaque_ops
    kernels = fusion.kernels
    assert len(steps) == len(kernels) + len(ops) and len(ops) == 2
    assert sorted(s.index for s in steps if s.kind is StepKind.KERNEL) == list(range(len(kernels)))
    assert sorted(s.index for s in steps if s.kind is StepKind.OPAQUE) == [0, 1]
    # Every buffer a step reads was written before at the same location; inputs exist from
    # the start. Kernel parameters do not say which they write: one at a location nothing
    # wrote yet must be written by the kernel, so all of them count as written afterwards.
    written = {(ParamKind.INPUT, i) for i in range(3)}
    for step in steps:
        if step.kind is StepKind.KERNEL:
            assert step.opaque is None and step.kernel is kernels[step.index]
            written |= {(p.kind, p.index) for p in step.kernel.params}
            continue
        op = step.opaque
        assert step.kernel is None and op == ops[step.index] and op.index == step.index
        assert op.name == "matmul" and len(op.operands) == 2
        for operand in op.operands:
            assert operand.dtype is DType.F32 and len(operand.shape) == 2
            assert (operand.kind, operand.index) in written, f"{op} reads before a write"
        assert op.result.kind in (ParamKind.OUTPUT, ParamKind.WORKSPACE)
        written.add((op.result.kind, op.result.index))
    assert {(ParamKind.OUTPUT, 0), (ParamKind.OUTPUT, 1)} <= written
    # Shapes and graph values, in graph order.
    first, second = ops
    assert [t.shape for t in first.operands] == [(ROWS, MODEL), (MODEL, HIDDEN)]
    assert first.result.shape == (ROWS, HIDDEN) and second.result.shape == (ROWS, MODEL)
    assert [t.shape for t in second.operands] == [(ROWS, HIDDEN), (HIDDEN, MODEL)]
    assert second.operands[1] == (ParamKind.INPUT, 2, DType.F32, (HIDDEN, MODEL))  # w2
    assert first.handle == h._handle and second.handle == o._handle
    assert first.value is not None and first.value.shape == (ROWS, HIDDEN)
    # h is an output: the plan writes the first matmul's result there directly.
    assert (first.result.kind, first.result.index) == (ParamKind.OUTPUT, 1)


def test_a_plan_without_opaque_operations_is_all_kernel_steps(ctx, rng):
    g = ctx.graph()
    x = g.input("x", "f32", (2, 3))
    g.output("e", x.exp())
    fusion = g.fuse()
    assert fusion.opaque_ops == []
    assert [(s.kind, s.index) for s in fusion.steps] == [
        (StepKind.KERNEL, i) for i in range(len(fusion.kernels))
    ]
    never = Matmul()
    data = rng.standard_normal((2, 3), dtype=np.float32)
    assert_close(fusion.run(x=data, opaque=never)["e"], np.exp(data.astype(np.float64)))
    assert_close(g.evaluate(x=data, opaque=never)["e"], np.exp(data.astype(np.float64)))
    assert never.calls == []


def test_steps_of_a_closed_fusion(block):
    fusion = block[0].fuse()
    fusion.close()
    with pytest.raises(fstitch.Error, match="fusion is closed"):
        fusion.steps  # noqa: B018
    with pytest.raises(fstitch.Error, match="fusion is closed"):
        fusion.opaque_ops  # noqa: B018


def test_opaque_values_are_none_once_the_graph_is_closed(ctx):
    g = ctx.graph()
    build_block(g)
    fusion = g.fuse()
    g.close()
    op = fusion.opaque_ops[0]
    assert op.value is None and op.handle != 0 and op.name == "matmul"


# -- runs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_fused_runs_match_the_reference_through_the_same_callable(block, data, policy):
    g, h, o = block
    fusion = g.fuse(policy=policy)
    reference_matmul = Matmul()
    want = g.evaluate(data, opaque=reference_matmul)
    assert [call.handle for call in reference_matmul.calls] == [h._handle, o._handle]
    assert reference_matmul.calls[0].value.shape == (ROWS, HIDDEN)

    fused_matmul = Matmul()
    # A workspace of NaN bytes: a read of a value nothing wrote shows in the outputs.
    workspace = np.full(fusion.workspace_size + 1, 0xFF, np.uint8)
    outputs = {"y": np.full((ROWS, MODEL), np.nan, np.float32)}
    outputs["h"] = np.full((ROWS, HIDDEN), np.nan, np.float32)
    got = fusion.run(data, outputs=outputs, workspace=workspace, opaque=fused_matmul)
    assert got["y"] is outputs["y"] and got["h"] is outputs["h"]
    assert [call.handle for call in fused_matmul.calls] == [h._handle, o._handle]
    for name in ("y", "h"):
        assert_close(got[name], want[name])
        assert_close(got[name], expected_block(data)[name])


def test_positional_inputs_and_a_library_workspace(block, data):
    g = block[0]
    fusion = g.fuse()
    y, h = fusion.run([data["x"], data["w1"], data["w2"]], opaque=Matmul())
    assert_close(y, expected_block(data)["y"])
    assert_close(h, expected_block(data)["h"])


def test_a_callable_may_return_a_value(block, data):
    # Lambdas return what np.matmul returns; only an exception fails a call.
    g = block[0]
    fusion = g.fuse()
    result = fusion.run(data, opaque=lambda c: np.matmul(*c.operands, out=c.result))
    assert_close(result["y"], expected_block(data)["y"])


# -- failures ------------------------------------------------------------------------------------


class Failing:
    def __init__(self, error):
        self.error = error
        self.calls = 0

    def __call__(self, call):
        self.calls += 1
        raise self.error


@pytest.mark.parametrize("evaluate", [False, True], ids=["run", "evaluate"])
def test_an_exception_stops_the_run_and_names_the_operation(block, data, evaluate):
    g = block[0]
    fusion = g.fuse()
    failing = Failing(ValueError("the matmul ran out of patience"))
    with pytest.raises(fstitch.Error) as caught:
        if evaluate:
            g.evaluate(data, opaque=failing)
        else:
            fusion.run(data, opaque=failing)
    error = caught.value
    assert failing.calls == 1
    assert error.status is Status.LAUNCH
    assert 'opaque operation "matmul"' in error.message
    assert "ValueError: the matmul ran out of patience" in error.message
    function = "fst_graph_evaluate_reference" if evaluate else "fst_fusion_run"
    assert error.message.startswith(f"{function}_with_opaque")
    assert error.__cause__ is failing.error


def test_an_fstitch_error_keeps_its_status(block, data):
    fusion = block[0].fuse()
    failing = Failing(fstitch.Error(Status.SHAPE, "matmul shapes do not agree"))
    with pytest.raises(fstitch.Error) as caught:
        fusion.run(data, opaque=failing)
    assert caught.value.status is Status.SHAPE
    assert "FST_ERROR_SHAPE: matmul shapes do not agree" in caught.value.message
    assert '"matmul"' in caught.value.message
    assert caught.value.__cause__ is failing.error


def test_a_keyboard_interrupt_comes_back_as_itself(block, data):
    fusion = block[0].fuse()
    failing = Failing(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        fusion.run(data, opaque=failing)
    assert failing.calls == 1
    # The fusion is still usable afterwards.
    assert_close(fusion.run(data, opaque=Matmul())["h"], expected_block(data)["h"])


def test_a_failure_in_a_later_call_stops_the_run_there(block, data):
    fusion = block[0].fuse()
    seen = []

    def second_fails(call):
        seen.append(call.handle)
        if len(seen) == 2:
            raise RuntimeError("second")
        np.matmul(*call.operands, out=call.result)

    with pytest.raises(fstitch.Error, match="RuntimeError: second") as caught:
        fusion.run(data, opaque=second_fails)
    assert len(seen) == 2 and isinstance(caught.value.__cause__, RuntimeError)


def test_no_callable_for_a_plan_with_opaque_operations(block, data):
    g = block[0]
    fusion = g.fuse()
    for call in (lambda: fusion.run(data), lambda: fusion.run(data, opaque=None)):
        with pytest.raises(fstitch.Error) as caught:
            call()
        assert caught.value.status is Status.UNSUPPORTED
        assert 'opaque operation "matmul"' in caught.value.message
        assert "opaque=" in caught.value.message
    with pytest.raises(fstitch.Error) as caught:
        g.evaluate(data)
    assert caught.value.status is Status.UNSUPPORTED and '"matmul"' in caught.value.message


@pytest.mark.parametrize("bad", [42, "matmul", np.zeros(3)])
def test_opaque_must_be_callable(block, data, bad):
    g = block[0]
    fusion = g.fuse()
    for call in (lambda: fusion.run(data, opaque=bad), lambda: g.evaluate(data, opaque=bad)):
        with pytest.raises(fstitch.Error, match="opaque is .*expected a callable") as caught:
            call()
        assert caught.value.status is Status.INVALID_ARGUMENT


def test_building_on_the_graph_during_its_evaluation_is_refused(block, data):
    g = block[0]

    def builds(call):
        g.constant(1.0, "f32")

    with pytest.raises(fstitch.Error) as caught:
        g.evaluate(data, opaque=builds)
    assert caught.value.status is Status.INVALID_ARGUMENT
    assert "the graph is being evaluated" in caught.value.message
    # Refused before the library saw it: the graph is still sound and can be built on.
    assert g.constant(1.0, "f32").shape == ()
    assert_close(g.evaluate(data, opaque=Matmul())["h"], expected_block(data)["h"])


def test_a_broken_result_shape_is_reported(block, data):
    fusion = block[0].fuse()

    def wrong(call):
        call.result[...] = np.zeros((3, 3), np.float32)  # does not broadcast

    with pytest.raises(fstitch.Error) as caught:
        fusion.run(data, opaque=wrong)
    assert caught.value.status is Status.LAUNCH
    assert isinstance(caught.value.__cause__, ValueError)


def test_operands_are_read_only(block, data):
    fusion = block[0].fuse()

    def writes_an_operand(call):
        call.operands[0][0, 0] = 1.0

    with pytest.raises(fstitch.Error, match="read-only"):
        fusion.run(data, opaque=writes_an_operand)


def test_concurrent_runs_each_call_their_own_callable(block, data):
    import threading

    fusion = block[0].fuse()
    want = expected_block(data)
    errors = []

    def worker(scale):
        try:
            seen = []

            def scaled_matmul(call):
                seen.append(threading.get_ident())
                np.matmul(*call.operands, out=call.result)
                call.result *= scale

            got = fusion.run(data, opaque=scaled_matmul)
            assert seen == [threading.get_ident()] * 2  # on the thread that started the run
            assert_close(got["h"], want["h"] * scale)
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(1.0 + i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_half_and_bool_buffers(ctx):
    g = ctx.graph()
    x = g.input("x", "f16", 6)
    negated = g.opaque("negate", [x], "f16", 6)
    flipped = g.opaque("flip", [negated > 0], "bool", 6)
    g.output("n", negated)
    g.output("f", flipped)
    seen = []

    def run(call):
        (operand,) = call.operands
        seen.append((call.name, operand.dtype, call.operand_dtypes, call.result_dtype))
        if call.name == "negate":
            call.result[...] = -operand
        else:
            call.result[...] = ~operand

    data = np.array([-1.5, 0.25, 2, -0.0, 3, -4], np.float16)
    want = g.evaluate(x=data, opaque=run)
    assert seen == [
        ("negate", np.dtype(np.float16), (DType.F16,), DType.F16),
        ("flip", np.dtype(np.bool_), (DType.BOOL,), DType.BOOL),
    ]
    np.testing.assert_array_equal(want["n"], -data)
    np.testing.assert_array_equal(want["f"], ~(-data > 0))
    got = g.fuse().run(x=data, opaque=run)
    np.testing.assert_array_equal(got["n"], want["n"])
    np.testing.assert_array_equal(got["f"], want["f"])
