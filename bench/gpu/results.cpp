#include "results.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "json_writer.hpp"

namespace fstitch::bench_gpu {
namespace {

void write_timing(JsonWriter& json, const Timing& timing) {
  json.key("runs").value(timing.runs);
  json.key("median_us").value(timing.median_us);
  json.key("min_us").value(timing.min_us);
  json.key("max_us").value(timing.max_us);
}

void write_case(JsonWriter& json, const CaseResult& result, double copy_gb_per_s) {
  json.begin_object();
  json.key("graph").value(result.spec.graph);
  json.key("rows").value(result.spec.rows);
  json.key("cols").value(result.spec.cols);
  if (!result.spec.dims.empty()) {
    json.key("dims").begin_array();
    for (int64_t dim : result.spec.dims) json.value(dim);
    json.end_array();
  }
  json.key("dtype").value(dtype_name(result.spec.dtype));
  json.key("ok").value(result.ok);
  if (result.error.empty()) {
    json.key("error").null();
  } else {
    json.key("error").value(result.error);
  }
  json.key("kernels").value(static_cast<uint64_t>(result.kernels));
  json.key("planned_bytes").value(result.planned_bytes);
  json.key("lower_bound_bytes").value(result.lower_bound_bytes);
  json.key("workspace_bytes").value(static_cast<uint64_t>(result.workspace_bytes));
  json.key("fuse_ms").value(result.fuse_ms);
  json.key("first_run_ms").value(result.first_run_ms);
  json.key("check").begin_object();
  json.key("ran").value(result.check.ran);
  json.key("ok").value(result.check.ok);
  json.key("relative_l2").value(result.check.worst_relative_l2);
  json.key("limit").value(result.check.limit);
  json.key("rows_checked").value(result.check.rows_checked);
  json.key("nonfinite").value(result.check.nonfinite);
  json.key("note").value(result.check.note);
  json.end_object();
  json.key("timing").begin_object();
  write_timing(json, result.timing);
  json.end_object();
  const double gbps = effective_gb_per_s(result);
  json.key("effective_gb_per_s").value(gbps);
  json.key("fraction_of_copy").value(copy_gb_per_s > 0 && gbps > 0 ? gbps / copy_gb_per_s : 0.0);
  json.end_object();
}

}  // namespace

double effective_gb_per_s(const CaseResult& result) {
  if (result.timing.median_us <= 0) return 0;
  return static_cast<double>(result.lower_bound_bytes) / result.timing.median_us / 1e3;
}

std::string results_json(const RunReport& report) {
  JsonWriter json;
  json.begin_object();
  json.key("tool").value("fstitch_bench_gpu");
  json.key("mode").value(report.mode);
  json.key("fstitch_version").value(report.fstitch_version);
  if (report.error.empty()) {
    json.key("error").null();
  } else {
    json.key("error").value(report.error);
  }
  json.key("device");
  if (report.have_device) {
    json.begin_object();
    json.key("name").value(report.device.name);
    json.key("compute_capability").value(report.device.compute_capability());
    json.key("multiprocessors").value(report.device.multiprocessors);
    json.key("l2_bytes").value(report.device.l2_bytes);
    json.key("driver_version").value(report.driver_version);
    json.key("flush_bytes").value(static_cast<uint64_t>(report.flush_bytes));
    json.end_object();
  } else {
    json.null();
  }
  json.key("copy").begin_object();
  json.key("measured").value(report.copy.measured);
  json.key("error").value(report.copy.error);
  json.key("bytes_moved").value(report.copy.bytes_moved);
  write_timing(json, report.copy.timing);
  json.key("gb_per_s").value(report.copy.gb_per_s());
  json.end_object();
  json.key("cases").begin_array();
  for (const CaseResult& result : report.cases) write_case(json, result, report.copy.gb_per_s());
  json.end_array();
  json.key("overhead");
  if (report.have_overhead) {
    const OverheadResult& o = report.overhead;
    json.begin_object();
    json.key("ok").value(o.ok);
    json.key("error").value(o.error);
    json.key("graph").value(o.graph);
    json.key("kernels").value(static_cast<uint64_t>(o.kernels));
    json.key("calls").value(o.calls);
    json.key("calls_per_sync").value(o.calls_per_sync);
    json.key("fstitch_us_per_kernel").value(o.fstitch_us_per_kernel);
    json.key("fstitch_auto_workspace_us_per_kernel").value(o.fstitch_auto_workspace_us_per_kernel);
    json.key("raw_us_per_kernel").value(o.raw_us_per_kernel);
    json.key("overhead_us_per_kernel").value(o.overhead_us_per_kernel);
    json.key("goal_us_per_kernel").value(3.0);
    json.end_object();
  } else {
    json.null();
  }
  json.end_object();
  return json.text() + "\n";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + temporary);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("writing " + temporary + " failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + temporary + " to " + path);
  }
}

}  // namespace fstitch::bench_gpu
