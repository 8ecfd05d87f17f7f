#include "load_job/sweep_files.hpp"

#include "base/run_output.hpp"

namespace runara {

namespace {

// The columns, in order: what a sweep is compared by.
const char* const kColumns[] = {
    "label", "load_model", "max_concurrency", "request_rate", "num_prompts", "completed", "failed",
    "duration", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
    "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
    "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
    "max_concurrent_requests", "total_input_tokens", "total_output_tokens"};

std::string csv_cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

nlohmann::json sweep_row(const nlohmann::json& result) {
  nlohmann::json row = nlohmann::json::object();
  for (const char* column : kColumns) {
    const auto it = result.find(column);
    row[column] = it == result.end() ? nlohmann::json(nullptr) : *it;
  }
  const auto crossed = result.find("thresholds_crossed");
  row["thresholds_crossed"] = crossed == result.end() ? 0 : crossed->size();
  return row;
}

std::string sweep_csv(const nlohmann::json& rows) {
  std::string out;
  for (const char* column : kColumns) out += std::string(out.empty() ? "" : ",") + column;
  out += ",thresholds_crossed\n";
  for (const auto& row : rows) {
    std::string line;
    for (const char* column : kColumns) line += (line.empty() ? "" : ",") + csv_cell(row.value(column, nlohmann::json()));
    out += line + "," + csv_cell(row.value("thresholds_crossed", nlohmann::json(0))) + "\n";
  }
  return out;
}

std::string write_sweep_files(const std::string& dir, const nlohmann::json& rows) try {
  if (std::string why = write_file_atomic(dir + "/sweep.json", rows.dump(2) + "\n"); !why.empty()) return why;
  return write_file_atomic(dir + "/sweep.csv", sweep_csv(rows));
} catch (const std::exception& e) {
  return "writing the sweep table to " + dir + " failed: " + e.what();
}

}  // namespace runara
