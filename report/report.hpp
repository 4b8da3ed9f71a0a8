// Writers from the result model. All of them work from a RunResult alone, so a saved
// JSON can be turned into every output on a machine without a GPU.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/result.hpp"

namespace gd::report {

// The summary table a run ends with: per path and level, capacity, latency in cycles
// and ns, confidence; then the TLB levels and the derived DRAM-minus-cache figure.
void print_summary(std::ostream& os, const RunResult& r, const ProbeRegistry& registry);

// One CSV per curve (latency_<path>.csv, tlb_<stride>.csv) in dir. Returns the files written.
// Every probe's CSV files (through the registry) and figures.csv, the headline figures.
std::vector<std::filesystem::path> write_csv(const std::filesystem::path& dir, const RunResult& r,
                                             const ProbeRegistry& registry);
std::filesystem::path write_figures_csv(const std::filesystem::path& file,
                                        const std::vector<Figure>& figures);

struct HtmlOptions {
  bool png = false;               // also write PNG charts next to the HTML
  std::filesystem::path png_dir;  // where; defaults to the HTML file's folder
  // The reference GPUs the summary measures this one against (data/reference); null: the
  // summary says why there are none (references_note).
  const std::vector<ReferenceGpu>* references = nullptr;
  std::string references_note = "no reference database was given";
};

// Whether gnuplot can be run here; *why says why not.
bool gnuplot_available(std::string* why);

// The HTML report: device facts, summary tables, and per path a chart of latency
// (cycles and ns) against footprint on a log axis with the levels marked. Charts are
// SVG from gnuplot inline; without gnuplot the page says so and keeps the tables.
// Returns the PNG files written (if any). Throws std::runtime_error if it cannot write.
std::vector<std::filesystem::path> write_html(const std::filesystem::path& file, const RunResult& r,
                                              const ProbeRegistry& registry,
                                              const HtmlOptions& opt);

// Fails early (std::runtime_error naming the path) if a file cannot be created at `file`
// (creating missing parent folders), or with RefusedOutput where `file` exists and is not
// a regular file; used before measuring.
void ensure_writable(const std::filesystem::path& file);

// Writes a text file (HTML, CSV) with write_file (output.hpp): temp file, rename; throws
// std::runtime_error naming the file when it cannot, RefusedOutput for a target that is
// not a regular file.
void write_text(const std::filesystem::path& file, const std::string& text);

// Writes the JSON document the same way.
void write_json(const std::filesystem::path& file, const RunResult& r,
                const ProbeRegistry& registry);

}  // namespace gd::report
