#!/usr/bin/env python3
"""Merges the results of one GPU check into a Markdown report: the steps of tools/gpu-check
(pass or fail, seconds), then one table row per canonical graph, shape and dtype with
fstitch's time beside torch eager, torch.compile and jax.jit, fstitch's effective bandwidth
and its share of the measured copy bandwidth, then fstitch's host overhead per kernel.

  report.py --fstitch bench.json --torch torch.json [--steps steps.tsv] [--output report.md]

Any input may be missing or broken: the report says so and shows the rest. Uses only the
standard library.
"""

import argparse
import json
import sys


def load_json(path, label, problems):
    if not path:
        return None
    try:
        with open(path) as handle:
            return json.load(handle)
    except FileNotFoundError:
        problems.append(f"{label}: no results file ({path})")
    except (OSError, ValueError) as error:
        problems.append(f"{label}: unreadable results file {path}: {error}")
    return None


def load_steps(path, problems):
    """Rows of name, status, seconds, detail from the tab-separated file tools/gpu-check writes."""
    if not path:
        return []
    steps = []
    try:
        with open(path) as handle:
            for line in handle:
                fields = line.rstrip("\n").split("\t")
                if len(fields) >= 3 and fields[0]:
                    steps.append(
                        {
                            "name": fields[0],
                            "status": fields[1],
                            "seconds": fields[2],
                            "detail": fields[3] if len(fields) > 3 else "",
                        }
                    )
    except OSError as error:
        problems.append(f"steps: unreadable {path}: {error}")
    return steps


def number(value, digits):
    if value is None or not isinstance(value, (int, float)):
        return "-"
    return f"{value:.{digits}f}"


def cell(text):
    """Table cells must not break the row."""
    return str(text).replace("|", "/").replace("\n", " ")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def mode_time(case, mode):
    if case is None:
        return None
    result = case.get("results", {}).get(mode)
    if not isinstance(result, dict):
        return None
    return result.get("median_us")


def mode_error(case, mode):
    if case is None:
        return None
    result = case.get("results", {}).get(mode)
    return result.get("error") if isinstance(result, dict) else None


def ratio(numerator, denominator):
    if not numerator or not denominator:
        return "-"
    return f"{numerator / denominator:.2f}x"


def steps_section(steps):
    if not steps:
        return []
    rows = [[s["name"], s["status"], s["seconds"], s["detail"]] for s in steps]
    return ["## Steps", "", table(["step", "result", "seconds", "detail"], rows), ""]


def shape_of(case):
    """"8192x4096", or a reduction case's input shape ("64x4096x64") from its dims."""
    dims = case.get("dims")
    if isinstance(dims, list) and dims:
        return "x".join(str(d) for d in dims)
    return f"{case.get('rows')}x{case.get('cols')}"


def check_text(case):
    if case.get("error"):
        return "ERROR"
    check = case.get("check") or {}
    if not check.get("ran"):
        return "ok, unchecked" if case.get("ok") else "FAILED"
    text = "ok" if check.get("ok") else "FAILED"
    l2 = check.get("relative_l2")
    if check.get("nonfinite"):
        text += f" ({check['nonfinite']} non-finite)"
    elif isinstance(l2, (int, float)):
        text += f" ({l2:.1e})"
    return text


def benchmark_section(fstitch, torch, problems):
    lines = []
    device = (fstitch or {}).get("device") or {}
    title = "## GPU benchmark"
    if device.get("name"):
        title += f": {device['name']} (sm_{device.get('compute_capability', '?')}, driver {device.get('driver_version', '?')})"
    lines += [title, ""]
    facts = []
    if fstitch:
        facts.append(f"fstitch {fstitch.get('fstitch_version', '?')}, mode {fstitch.get('mode', '?')}")
        if fstitch.get("error"):
            problems.append("fstitch_bench_gpu: " + fstitch["error"])
    if torch:
        versions = [f"{name} {torch[key]}" for name, key in (("torch", "torch_version"), ("jax", "jax_version"))
                    if torch.get(key)]
        if versions:
            facts.append(", ".join(versions))
        if torch.get("jax_error"):
            problems.append("jax: " + torch["jax_error"])
        for error in torch.get("errors", []):
            problems.append("torch_baseline: " + error)
    copies = []
    fstitch_copy = ((fstitch or {}).get("copy") or {}).get("gb_per_s")
    torch_copy = ((torch or {}).get("copy") or {}).get("gb_per_s")
    if fstitch_copy:
        copies.append(f"{fstitch_copy:.0f} GB/s in the fstitch run")
    if torch_copy:
        copies.append(f"{torch_copy:.0f} GB/s in the torch run")
    if copies:
        facts.append("device-to-device copy (bytes read + written): " + ", ".join(copies))
    if facts:
        lines += ["; ".join(facts) + ".", ""]

    torch_cases = {}
    for case in (torch or {}).get("cases", []):
        torch_cases[(case.get("graph"), shape_of(case), case.get("dtype"))] = case
    modes = (torch or {}).get("modes", [])
    show_autotune = "max_autotune" in modes
    show_jax = "jax" in modes
    # An optimizer step's fused implementation (torch.optim.AdamW(fused=True)).
    show_fused = any("fused" in (case.get("results") or {}) for case in torch_cases.values())
    header = ["graph", "shape", "dtype", "kernels", "LB MB", "fstitch us", "GB/s", "% copy", "eager us", "compile us"]
    if show_fused:
        header.append("fused us")
    if show_autotune:
        header.append("autotune us")
    if show_jax:
        header.append("jax us")
    header += ["vs eager", "vs compile"] + (["vs fused"] if show_fused else []) + ["check"]

    rows = []
    seen = set()
    for case in (fstitch or {}).get("cases", []):
        key = (case.get("graph"), shape_of(case), case.get("dtype"))
        seen.add(key)
        theirs = torch_cases.get(key)
        timing = case.get("timing") or {}
        ours = timing.get("median_us") if timing.get("runs") else None
        fraction = case.get("fraction_of_copy")
        row = [
            case.get("graph"),
            key[1],
            case.get("dtype"),
            case.get("kernels", "-"),
            number((case.get("lower_bound_bytes") or 0) / 1e6, 1),
            number(ours, 1),
            number(case.get("effective_gb_per_s") or None, 0),
            number(fraction * 100 if fraction else None, 0),
            number(mode_time(theirs, "eager"), 1),
            number(mode_time(theirs, "compile"), 1),
        ]
        if show_fused:
            row.append(number(mode_time(theirs, "fused"), 1))
        if show_autotune:
            row.append(number(mode_time(theirs, "max_autotune"), 1))
        if show_jax:
            row.append(number(mode_time(theirs, "jax"), 1))
        row += [ratio(mode_time(theirs, "eager"), ours), ratio(mode_time(theirs, "compile"), ours)]
        if show_fused:
            row.append(ratio(mode_time(theirs, "fused"), ours))
        row.append(check_text(case))
        rows.append(row)
        if case.get("error"):
            problems.append(f"fstitch {key[0]} {key[1]} {key[2]}: {case['error']}")
        elif (case.get("check") or {}).get("note"):
            problems.append(f"fstitch {key[0]} {key[1]} {key[2]}: {case['check']['note']}")
    for key, theirs in torch_cases.items():
        if key in seen:
            continue
        lower_bound = theirs.get("lower_bound_bytes") or 0
        row = [key[0], key[1], key[2], "-", number(lower_bound / 1e6, 1), "-", "-", "-"]
        row += [number(mode_time(theirs, "eager"), 1), number(mode_time(theirs, "compile"), 1)]
        if show_fused:
            row.append(number(mode_time(theirs, "fused"), 1))
        if show_autotune:
            row.append(number(mode_time(theirs, "max_autotune"), 1))
        if show_jax:
            row.append(number(mode_time(theirs, "jax"), 1))
        row += ["-", "-"] + (["-"] if show_fused else []) + ["not run"]
        rows.append(row)
    for key, theirs in torch_cases.items():
        for mode in modes + (["fused"] if show_fused else []):
            error = mode_error(theirs, mode)
            if error:
                problems.append(f"{mode} {key[0]} {key[1]} {key[2]}: {error}")

    if rows:
        lines += [table(header, rows), ""]
        lines += [
            "LB MB: the lower bound of global-memory traffic (each input read once, each output written once), "
            "in 10^6 bytes; GB/s: LB over fstitch's median time; % copy: that over the copy bandwidth; "
            "vs eager / vs compile: their median time over fstitch's (above 1: fstitch is faster); "
            + ("fused: torch.optim.AdamW(fused=True), eager: its foreach form (an optimizer step's shape is its "
               "tensor count); " if show_fused else "")
            + "check: relative L2 error against the reference evaluator on sampled rows "
            "(the reduction graphs: on the whole tensors). "
            "Times are medians of CUDA events with the L2 flushed before each run"
            + ("; jax times are host clock around the call, dispatch included." if show_jax else "."),
            "",
        ]
    else:
        lines += ["No benchmark results.", ""]

    overhead = (fstitch or {}).get("overhead")
    if isinstance(overhead, dict):
        if overhead.get("ok"):
            own = overhead.get("overhead_us_per_kernel")
            goal = overhead.get("goal_us_per_kernel", 3.0)
            verdict = "met" if isinstance(own, (int, float)) and own <= goal else "NOT met"
            lines += [
                f"Host overhead per kernel ({overhead.get('graph')}, {overhead.get('kernels')} kernels): "
                f"fst_fusion_run {number(overhead.get('fstitch_us_per_kernel'), 2)} us, "
                f"raw cuLaunchKernel {number(overhead.get('raw_us_per_kernel'), 2)} us, "
                f"fstitch's own {number(own, 2)} us (goal <= {goal:g} us: {verdict}); "
                f"with fstitch allocating the workspace {number(overhead.get('fstitch_auto_workspace_us_per_kernel'), 2)} us.",
                "",
            ]
        else:
            problems.append("host overhead: " + str(overhead.get("error")))
    return lines


def render(fstitch_path, torch_path, steps_path):
    problems = []
    steps = load_steps(steps_path, problems)
    fstitch = load_json(fstitch_path, "fstitch_bench_gpu", problems)
    torch = load_json(torch_path, "torch_baseline", problems)
    lines = steps_section(steps)
    lines += benchmark_section(fstitch, torch, problems)
    if problems:
        lines += ["Problems:", ""] + [f"- {cell(p)[:400]}" for p in problems] + [""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fstitch", help="fstitch_bench_gpu --output file")
    parser.add_argument("--torch", help="torch_baseline.py --output file")
    parser.add_argument("--steps", help="tab-separated steps file of tools/gpu-check")
    parser.add_argument("--output", help="also write the report here")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    text = render(args.fstitch, args.torch, args.steps)
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
