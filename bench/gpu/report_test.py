#!/usr/bin/env python3
"""Tests of report.py on hand-made results files (standard library only)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

FSTITCH = {
    "tool": "fstitch_bench_gpu",
    "mode": "full",
    "fstitch_version": "0.2.0",
    "error": None,
    "device": {"name": "NVIDIA H200", "compute_capability": 90, "driver_version": 13000},
    "copy": {"measured": True, "gb_per_s": 4000.0},
    "cases": [
        {
            "graph": "layer_norm",
            "rows": 8192,
            "cols": 4096,
            "dtype": "bf16",
            "ok": True,
            "error": None,
            "kernels": 1,
            "lower_bound_bytes": 134234112,
            "check": {"ran": True, "ok": True, "relative_l2": 2.5e-3, "note": ""},
            "timing": {"runs": 50, "median_us": 40.0, "min_us": 39.0},
            "effective_gb_per_s": 3355.85,
            "fraction_of_copy": 0.8389,
        },
        {
            "graph": "gelu_bias",
            "rows": 8192,
            "cols": 4096,
            "dtype": "bf16",
            "ok": False,
            "error": "fst_fusion_run: FST_ERROR_LAUNCH: cuLaunchKernel failed",
            "kernels": 1,
            "lower_bound_bytes": 134225920,
            "check": {"ran": False, "ok": False, "note": ""},
            "timing": {"runs": 0, "median_us": 0},
            "effective_gb_per_s": 0,
            "fraction_of_copy": 0,
        },
    ],
    "overhead": {
        "ok": True,
        "graph": "chain of 16 unary ops 32x256 f32, policy none",
        "kernels": 16,
        "fstitch_us_per_kernel": 3.5,
        "raw_us_per_kernel": 2.25,
        "overhead_us_per_kernel": 1.25,
        "fstitch_auto_workspace_us_per_kernel": 3.75,
        "goal_us_per_kernel": 3.0,
    },
}

TORCH = {
    "tool": "torch_baseline",
    "torch_version": "2.11.0",
    "jax_version": "0.11.2",
    "modes": ["eager", "compile", "jax"],
    "copy": {"gb_per_s": 4100.0},
    "errors": [],
    "cases": [
        {
            "graph": "layer_norm",
            "rows": 8192,
            "cols": 4096,
            "dtype": "bf16",
            "lower_bound_bytes": 134234112,
            "results": {
                "eager": {"median_us": 200.0},
                "compile": {"median_us": 50.0},
                "jax": {"error": "RuntimeError: no GPU"},
            },
        },
        {
            "graph": "rms_norm",
            "rows": 16384,
            "cols": 1024,
            "dtype": "f32",
            "lower_bound_bytes": 134221824,
            "results": {"eager": {"median_us": 120.0}, "compile": {"error": "BackendCompilerFailed: boom"}},
        },
    ],
}


def write(directory, name, content):
    path = os.path.join(directory, name)
    with open(path, "w") as out:
        out.write(content if isinstance(content, str) else json.dumps(content))
    return path


def row_of(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row starting {prefix!r} in:\n{text}")


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp()

    def test_merges_fstitch_and_torch_rows(self):
        text = report.render(
            write(self.directory, "f.json", FSTITCH),
            write(self.directory, "t.json", TORCH),
            write(self.directory, "s.tsv", "build\tpass\t61\t\ntests\tFAIL (rc 8)\t120\t3 failed\n"),
        )
        self.assertIn("## GPU benchmark: NVIDIA H200 (sm_90, driver 13000)", text)
        row = row_of(text, "| layer_norm | 8192x4096 | bf16")
        # graph shape dtype kernels LB fstitch GB/s %copy eager compile jax vs-eager vs-compile check
        self.assertEqual(row[3:], ["1", "134.2", "40.0", "3356", "84", "200.0", "50.0", "-", "5.00x", "1.25x",
                                   "ok (2.5e-03)"])
        self.assertEqual(row_of(text, "| gelu_bias")[-1], "ERROR")
        torch_only = row_of(text, "| rms_norm | 16384x1024 | f32")
        self.assertEqual(torch_only[-1], "not run")
        self.assertEqual(torch_only[8], "120.0")
        self.assertEqual(row_of(text, "| tests"), ["tests", "FAIL (rc 8)", "120", "3 failed"])
        self.assertIn("fstitch's own 1.25 us (goal <= 3 us: met)", text)
        self.assertIn("4000 GB/s in the fstitch run, 4100 GB/s in the torch run", text)
        self.assertIn("compile rms_norm 16384x1024 f32: BackendCompilerFailed: boom", text)
        self.assertIn("fstitch gelu_bias 8192x4096 bf16: fst_fusion_run: FST_ERROR_LAUNCH", text)
        self.assertIn("jax layer_norm 8192x4096 bf16: RuntimeError: no GPU", text)

    def test_unwritten_outputs_show_as_non_finite(self):
        poisoned = json.loads(json.dumps(FSTITCH))
        poisoned["cases"][0]["check"] = {"ran": True, "ok": False, "relative_l2": 0.0, "nonfinite": 4096, "note": "x"}
        text = report.render(write(self.directory, "f.json", poisoned), None, None)
        self.assertEqual(row_of(text, "| layer_norm")[-1], "FAILED (4096 non-finite)")

    def test_overhead_over_the_goal_is_flagged(self):
        slow = json.loads(json.dumps(FSTITCH))
        slow["overhead"]["overhead_us_per_kernel"] = 4.5
        text = report.render(write(self.directory, "f.json", slow), None, None)
        self.assertIn("(goal <= 3 us: NOT met)", text)

    def test_missing_and_broken_inputs_are_reported_not_fatal(self):
        no_gpu = {"tool": "fstitch_bench_gpu", "mode": "check", "error": "no CUDA driver: libcuda.so.1 missing",
                  "device": None, "copy": {"measured": False}, "cases": [], "overhead": None}
        text = report.render(
            write(self.directory, "f.json", no_gpu),
            write(self.directory, "t.json", "{not json"),
            os.path.join(self.directory, "absent.tsv"),
        )
        self.assertIn("No benchmark results.", text)
        self.assertIn("fstitch_bench_gpu: no CUDA driver: libcuda.so.1 missing", text)
        self.assertIn("torch_baseline: unreadable results file", text)
        text = report.render(os.path.join(self.directory, "none.json"), None, None)
        self.assertIn("fstitch_bench_gpu: no results file", text)

    def test_reduction_cases_show_their_input_shape(self):
        with_reductions = json.loads(json.dumps(FSTITCH))
        with_reductions["cases"].append({
            "graph": "middle_axis_sum", "rows": 262144, "cols": 64, "dims": [64, 4096, 64], "dtype": "f32",
            "ok": True, "error": None, "kernels": 1, "lower_bound_bytes": 67125248,
            "check": {"ran": True, "ok": True, "relative_l2": 1e-7, "note": ""},
            "timing": {"runs": 50, "median_us": 25.0}, "effective_gb_per_s": 2685.0, "fraction_of_copy": 0.67,
        })
        with_reductions["cases"].append({
            "graph": "bias_grad_column_sum", "rows": 8192, "cols": 1024, "dims": [8192, 1024], "dtype": "bf16",
            "ok": False, "error": None, "kernels": 1, "lower_bound_bytes": 16779264,
            "check": {"ran": False, "ok": False, "note": "not checked: too large"},
            "timing": {"runs": 50, "median_us": 700.0}, "effective_gb_per_s": 24.0, "fraction_of_copy": 0.006,
        })
        text = report.render(write(self.directory, "f.json", with_reductions), None, None)
        row = row_of(text, "| middle_axis_sum | 64x4096x64 | f32")
        self.assertEqual(row[3:8], ["1", "67.1", "25.0", "2685", "67"])
        self.assertEqual(row[-1], "ok (1.0e-07)")
        self.assertEqual(row_of(text, "| bias_grad_column_sum | 8192x1024 | bf16")[-1], "FAILED")
        self.assertIn("fstitch bias_grad_column_sum 8192x1024 bf16: not checked: too large", text)
        self.assertIn("the reduction graphs: on the whole tensors", text)

    def test_an_optimizer_step_shows_the_fused_implementation(self):
        fstitch = json.loads(json.dumps(FSTITCH))
        fstitch["cases"].append({
            "graph": "adamw_step", "rows": 1, "cols": 100, "dims": [100], "dtype": "f32", "ok": True, "error": None,
            "kernels": 2, "lower_bound_bytes": 424166400,
            "check": {"ran": True, "ok": True, "relative_l2": 1e-7, "note": ""},
            "timing": {"runs": 50, "median_us": 150.0}, "effective_gb_per_s": 2827.8, "fraction_of_copy": 0.71,
        })
        torch = json.loads(json.dumps(TORCH))
        torch["cases"].append({
            "graph": "adamw_step", "rows": 1, "cols": 100, "dims": [100], "dtype": "f32",
            "lower_bound_bytes": 424166400,
            "results": {"eager": {"median_us": 600.0}, "fused": {"median_us": 180.0},
                        "compile": {"error": "RuntimeError: no triton"}},
        })
        text = report.render(write(self.directory, "f.json", fstitch), write(self.directory, "t.json", torch), None)
        header = row_of(text, "| graph | shape")
        row = row_of(text, "| adamw_step | 100 | f32")
        self.assertEqual(row[header.index("fused us")], "180.0")
        self.assertEqual(row[header.index("vs fused")], "1.20x")
        self.assertEqual(row[header.index("vs eager")], "4.00x")
        self.assertIn("compile adamw_step 100 f32: RuntimeError: no triton", text)
        # Graphs without a fused implementation show none.
        self.assertEqual(row_of(text, "| layer_norm | 8192x4096 | bf16")[header.index("fused us")], "-")
        self.assertNotIn("fused us", report.render(write(self.directory, "g.json", FSTITCH),
                                                   write(self.directory, "u.json", TORCH), None))

    def test_cells_never_break_the_table(self):
        broken = json.loads(json.dumps(FSTITCH))
        broken["cases"][0]["graph"] = "a|b\nc"
        text = report.render(write(self.directory, "f.json", broken), None, None)
        self.assertIn("| a/b c | 8192x4096", text)

    def test_main_writes_the_output_file(self):
        out = os.path.join(self.directory, "report.md")
        devnull = open(os.devnull, "w")
        saved = sys.stdout
        sys.stdout = devnull
        try:
            report.main(["--fstitch", write(self.directory, "f.json", FSTITCH), "--output", out])
        finally:
            sys.stdout = saved
            devnull.close()
        with open(out) as handle:
            self.assertIn("| layer_norm | 8192x4096 | bf16", handle.read())


if __name__ == "__main__":
    unittest.main()
