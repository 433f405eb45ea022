#include "measured_times.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "json_reader.hpp"

namespace fstitch::bench {
namespace {

std::string integer_text(double value) {
  return std::to_string(static_cast<long long>(std::llround(value)));
}

std::string case_shape(const JsonValue& c) {
  if (const JsonValue* dims = c.get("dims"); dims != nullptr && dims->type == JsonValue::Type::kArray) {
    std::string text;
    for (const JsonValue& dim : dims->items) {
      if (!dim.is_number()) throw std::runtime_error("a case's dims are not numbers");
      text += (text.empty() ? "" : "x") + integer_text(dim.number);
    }
    return text;
  }
  const JsonValue* rows = c.get("rows");
  const JsonValue* cols = c.get("cols");
  if (rows == nullptr || cols == nullptr || !rows->is_number() || !cols->is_number())
    throw std::runtime_error("a case has no rows and cols");
  return integer_text(rows->number) + "x" + integer_text(cols->number);
}

}  // namespace

std::string measured_key(const std::string& graph, const std::string& shape, const std::string& dtype) {
  return graph + " " + shape + " " + dtype;
}

MeasuredRun parse_measured(const std::string& json_text) {
  MeasuredRun run;
  try {
    const JsonValue root = parse_json(json_text);
    if (root.type != JsonValue::Type::kObject) throw std::runtime_error("the results are not a JSON object");
    if (const JsonValue* error = root.get("error");
        error != nullptr && error->is_string() && !error->string.empty())
      throw std::runtime_error("the GPU run did not measure: " + error->string);
    if (const JsonValue* device = root.get("device")) {
      if (const JsonValue* name = device->get("name"); name != nullptr && name->is_string())
        run.device = name->string;
    }
    if (const JsonValue* copy = root.get("copy")) {
      if (const JsonValue* gbps = copy->get("gb_per_s"); gbps != nullptr && gbps->is_number())
        run.copy_gb_per_s = gbps->number;
    }
    const JsonValue* cases = root.get("cases");
    if (cases == nullptr || cases->type != JsonValue::Type::kArray)
      throw std::runtime_error("no \"cases\" array");
    for (const JsonValue& c : cases->items) {
      const JsonValue* graph = c.get("graph");
      const JsonValue* dtype = c.get("dtype");
      const JsonValue* timing = c.get("timing");
      if (graph == nullptr || dtype == nullptr || !graph->is_string() || !dtype->is_string())
        throw std::runtime_error("a case has no graph or dtype");
      const JsonValue* median = timing != nullptr ? timing->get("median_us") : nullptr;
      if (median == nullptr || !median->is_number() || median->number <= 0) continue;  // not timed
      MeasuredCase measured;
      measured.median_us = median->number;
      if (const JsonValue* kernels = c.get("kernels"); kernels != nullptr && kernels->is_number())
        measured.kernels = static_cast<int>(kernels->number);
      if (const JsonValue* ok = c.get("ok"); ok != nullptr && ok->type == JsonValue::Type::kBool)
        measured.ok = ok->boolean;
      run.cases[measured_key(graph->string, case_shape(c), dtype->string)] = measured;
    }
    run.loaded = true;
  } catch (const std::exception& e) {
    run.cases.clear();
    run.error = e.what();
  }
  return run;
}

MeasuredRun read_measured(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    MeasuredRun run;
    run.error = "cannot read " + path;
    return run;
  }
  std::ostringstream text;
  text << in.rdbuf();
  MeasuredRun run = parse_measured(text.str());
  if (!run.error.empty()) run.error = path + ": " + run.error;
  return run;
}

std::string device_model_of(const std::string& gpu_name) {
  std::string upper;
  for (char c : gpu_name) upper += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  for (const auto& [name, model] :
       {std::pair<const char*, const char*>{"H200", "h200"}, {"H100", "h100"}, {"A100", "a100"}}) {
    if (upper.find(name) != std::string::npos) return model;
  }
  return "";
}

}  // namespace fstitch::bench
