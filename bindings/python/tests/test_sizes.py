"""Sizes computed from shapes: values beyond 2^62 bytes are shape errors from the builders
and the parser, huge but valid graphs fuse with exact byte numbers (and are not run), and
what cannot be allocated is an out-of-memory Error, never a wrapped size or a crash."""

from __future__ import annotations

import numpy as np
import pytest

import fstitch
from fstitch import Status

LIMIT = "more than the limit of 2^62 bytes for one value"

# iota f64[2^31, 2^31] -> exp -> reduce_sum: 2^65 bytes, which wraps to 0 in 64 bits.
HUGE_IOTA = """fstitch.graph 1
%0 = iota axis=0 : f64[2147483648,2147483648]
%1 = exp %0 : f64[2147483648,2147483648]
%2 = reduce_sum %1 axes=[1] keepdims=false : f64[2147483648]
output "y" = %2
"""

# f64[2^61 + 32]: 2^64 + 256 bytes, which wraps to 256.
HUGE_INPUT = """fstitch.graph 1
%0 = input "x" : f64[2305843009213693984]
%1 = exp %0 : f64[2305843009213693984]
%2 = reduce_sum %1 axes=[0] keepdims=false : f64[]
output "y" = %2
"""


def raises(status, call, *fragments):
    with pytest.raises(fstitch.Error) as caught:
        call()
    assert caught.value.status is status, str(caught.value)
    for fragment in fragments:
        assert fragment in caught.value.message, (fragment, caught.value.message)
    return caught.value


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (HUGE_IOTA, "line 2, column 6: iota result f64[2147483648,2147483648]"),
        (HUGE_INPUT, 'line 2, column 6: input "x" f64[2305843009213693984]'),
    ],
)
def test_parsing_values_beyond_the_limit(ctx, text, where):
    raises(Status.SHAPE, lambda: ctx.parse(text), where, LIMIT)


def test_builders_beyond_the_limit(ctx):
    g = ctx.graph()
    raises(Status.SHAPE, lambda: g.iota("f64", (2**31, 2**31)), "fst_iota", LIMIT)
    g.close()
    g = ctx.graph()
    raises(Status.SHAPE, lambda: g.input("x", "f64", 2**61 + 32), "fst_input", LIMIT)
    g.close()
    g = ctx.graph()
    x = g.input("x", "u8", 2**62)  # exactly at the limit
    assert x.size == 2**62
    raises(Status.SHAPE, lambda: x.cast("f32"), "cast result", LIMIT)
    g.close()


def test_a_huge_valid_graph_fuses_with_exact_bytes(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 2**40)
    g.output("y", x.exp())
    fusion = g.fuse()
    value_bytes = 4 * 2**40
    assert fusion.workspace_size == 0
    assert fusion.planned_bytes == 2 * value_bytes
    assert fusion.lower_bound_bytes == 2 * value_bytes
    (kernel,) = fusion.kernels
    assert kernel.estimated_bytes == (value_bytes, value_bytes)
    assert "const long long n = 1099511627776LL;" in kernel.source
    # A host array of that shape cannot be made dense here: out of memory, not numpy's error.
    view = np.broadcast_to(np.float32(1), (2**40,))
    raises(Status.OUT_OF_MEMORY, lambda: g.evaluate(x=view), "input 'x'", "out of memory")
    fusion.close()
    g.close()


def test_workspace_and_traffic_totals_beyond_memory(ctx):
    g = ctx.graph()
    x = g.input("x", "u8", 1)
    for i in range(4):
        g.output(f"y{i}", g.opaque("fill", [x], "u8", 2**62).max())
    raises(Status.OUT_OF_MEMORY, g.fuse, "the workspace would need more than 2^62 bytes")
    g.close()
    g = ctx.graph()
    for i in range(4):
        g.output(f"y{i}", g.input(f"x{i}", "u8", 2**62).max())
    raises(Status.OUT_OF_MEMORY, g.fuse, "more than 2^64 bytes")
    g.close()


def test_an_output_too_large_to_allocate_is_out_of_memory(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 1)
    g.output("y", x.broadcast_to(2**40))  # 4 TiB to allocate before the evaluator runs
    raises(
        Status.OUT_OF_MEMORY,
        lambda: g.evaluate(x=np.ones(1, np.float32)),
        "output 'y' (f32[1099511627776])",
        "out of memory",
    )
    g.close()
