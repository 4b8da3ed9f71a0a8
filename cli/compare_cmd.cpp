// gpudissect compare FILE... [--reference NAME]... [-o page.html] [--csv table.csv]
// gpudissect compare NEW.json --baseline OLD.json [--tolerance 3%]   (exit 3 on a regression)
// gpudissect compare CUDA.json VULKAN.json   (one GPU, two backends: what differs, and the code)
// gpudissect compare --parity CUDA.json OPENCL.json VULKAN.json [--markdown]
// gpudissect reference list | reference show NAME
#include "compare_cmd.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "backends.hpp"
#include "compare_report.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/compare_backends.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/units.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace gd::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kExitRegression = 3;

fs::path executable(const std::string& argv0) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !p.empty()) return p;
  return fs::absolute(argv0, ec);
}

ReferenceDb open_reference_db(const std::string& argv0) {
#ifdef GD_SOURCE_REFERENCE_DIR
  const fs::path fallback = GD_SOURCE_REFERENCE_DIR;  // the source tree this was built from
#else
  const fs::path fallback;
#endif
  const auto dir = find_reference_dir(executable(argv0), fallback);
  if (!dir)
    throw UsageError(
        "no reference database found: looked for data/reference next to the executable (../ and "
        "../../) and share/gpudissect/reference; set GD_REFERENCE_DIR to the folder");
  std::error_code ec;
  if (!fs::is_directory(*dir, ec))
    throw UsageError("the reference folder " + dir->string() +
                     " does not exist (GD_REFERENCE_DIR)");
  ReferenceDb db = load_reference_dir(*dir);
  for (const auto& e : db.errors) std::cerr << "warning: reference database: " << e << "\n";
  return db;
}

std::string valid_names(const ReferenceDb& db) {
  std::string s;
  for (const ReferenceGpu& g : db.gpus) s += (s.empty() ? "" : ", ") + ("\"" + g.name + "\"");
  return s.empty() ? "(none)" : s;
}

const ReferenceGpu& lookup(const ReferenceDb& db, const std::string& name) {
  const ReferenceGpu* g = find_reference(db, name);
  if (!g)
    throw UsageError("unknown reference GPU '" + name + "'; valid names: " + valid_names(db) +
                     " (gpudissect reference list shows them with their sources)");
  return *g;
}

// A result JSON (schema 1 or 2, any backend), or a reference file given by path.
CompareInput load_input(const std::string& file) {
  if (!std::ifstream(file)) throw UsageError("cannot read " + file);
  json j;
  try {
    j = read_json_file(file);
  } catch (const std::exception& e) {
    throw UsageError(file + ": " + e.what());
  }
  if (j.is_object() && j.contains("format") && j["format"] == "gpudissect-reference") {
    try {
      return input_from_reference(reference_from_json(j, file));
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  try {
    return input_from_result(run_result_from_json(j, probe_registry()), file);
  } catch (const std::exception& e) {
    throw UsageError(file + ": " + e.what());
  }
}

void check_writable(const std::string& file) {
  if (file.empty()) return;
  try {
    report::ensure_writable(file);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

class Commands final : public CompareCommands {
 public:
  explicit Commands(CLI::App& app) {
    compare_ = app.add_subcommand(
        "compare",
        "Compare saved results (any backend, any schema version) with each other and with "
        "reference GPUs, side by side and per SM per clock; or gate a new run against a "
        "baseline (exit status 3 on a regression); or compare one GPU's backends (two runs: "
        "what differs, with the code each timed; --parity: counts per probe). No GPU needed.");
    compare_->add_option("files", files_, "Result JSON files (the first is what ratios are to)");
    compare_->add_option("-r,--reference", references_,
                         "A reference GPU by name (repeatable; case-insensitive; "
                         "`gpudissect reference list` shows them)");
    compare_->add_option("-o,--output", html_, "Write the comparison as an HTML page");
    compare_->add_flag("--png", png_, "Also write the charts as PNG files next to the HTML (-o)");
    compare_->add_option("--csv", csv_, "Write the comparison (or the baseline verdicts) as CSV");
    compare_->add_option("--baseline", baseline_,
                         "Baseline mode: compare the one FILE against this result; exit status "
                         "3 when any figure regressed beyond the tolerance");
    compare_->add_option("--tolerance", tolerance_,
                         "Baseline mode: the allowed change, e.g. 3% (default 5%); a figure "
                         "whose baseline measured a wider spread (IQR over median) is allowed "
                         "that spread instead. Cross-backend and parity modes: how far two "
                         "backends' values may differ and still agree (default 5%)");
    compare_->add_flag("--cross-backend", cross_backend_,
                       "Cross-backend mode for two result files even where it is not chosen on "
                       "its own (same backend, or GPUs whose UUID and name differ)");
    compare_->add_flag("--side-by-side", side_by_side_,
                       "The side-by-side table for two runs of one GPU on different backends, "
                       "instead of the cross-backend comparison");
    compare_->add_flag("--parity", parity_,
                       "Parity table of two or more runs of one GPU (e.g. CUDA, OpenCL, "
                       "Vulkan): per probe, each run's ok figures, the ids ok in both a run "
                       "and the first, and how many of those agree within the tolerance");
    compare_->add_flag("--markdown", markdown_,
                       "Parity mode: print the table as Markdown (for the docs)");
    compare_->add_option("--json", json_,
                         "Cross-backend and parity modes: write the result as JSON");
    compare_->add_flag("--include-host", include_host_,
                       "Baseline mode: also gate the host-side figures (host.* of the host "
                       "memory probe, bandwidth.host.*_pageable), which are otherwise listed "
                       "as 'not gated (host)'");
    compare_->add_flag("-v,--verbose", verbose_,
                       "Baseline and cross-backend modes: also list figures within tolerance");
    compare_->add_flag("--allow-missing", allow_missing_,
                       "Baseline mode: a figure of the baseline that the new run lacks is only "
                       "listed, not a failure (for partial runs, e.g. run --quick or some "
                       "probes against a full baseline)");
    compare_->footer(
        "\nExit status: 0 done (no regression); 2 bad input (unreadable or malformed file, "
        "unknown reference name, fewer than two inputs); 3 baseline mode: at least one figure "
        "regressed beyond the tolerance, failed where the baseline had it ok, or is missing from "
        "(or has another unit in) the new run (--allow-missing lists missing figures instead). "
        "Figures new in the new run are listed. Each figure may move by the larger of the "
        "tolerance, the spread the baseline measured for it (IQR over median of its repeats) "
        "and a capacity's sweep step. What is better (higher or lower), the unit, the spread "
        "and the step are the baseline's, never the new file's. Host-side figures (host.*, "
        "bandwidth.host.*_pageable) are not gated unless --include-host.\n"
        "\nCross-backend mode is chosen on its own when exactly two result files (no "
        "--reference, no --baseline) come from different backends (the run JSON's "
        "device.backend: cuda, opencl, vulkan) of one GPU (the same device UUID, else the same "
        "device name); --cross-backend forces it, --side-by-side keeps the table. It lists "
        "every figure ok in both runs whose values differ beyond the tolerance (default 5%), "
        "with both values, the ratio [2]/[1] and the instructions each backend timed side by "
        "side, then the ids ok in one run only with the other run's status; --csv and --json "
        "write every id ok in either run, -o the side-by-side page. --parity counts per probe. "
        "Both exit 0 whatever differs (2 on bad input).\n");

    reference_ = app.add_subcommand("reference", "The reference GPUs shipped with the tool");
    reference_->require_subcommand(1);
    list_ = reference_->add_subcommand("list", "List the reference GPUs with their sources");
    show_ = reference_->add_subcommand("show", "Print one reference GPU's facts and figures");
    show_->add_option("name", show_name_, "Reference GPU name (case-insensitive)")->required();
  }

  bool chosen() const override { return compare_->parsed() || reference_->parsed(); }

  int run(const std::string& argv0) override {
    if (list_->parsed()) return list(argv0);
    if (show_->parsed()) return show(argv0);
    if (!baseline_.empty()) return run_baseline(argv0);
    if (parity_) return run_parity();
    return run_compare(argv0);
  }

 private:
  int list(const std::string& argv0) {
    const ReferenceDb db = open_reference_db(argv0);
    std::cout << "Reference GPUs (" << db.dir.string() << "):\n";
    for (const ReferenceGpu& g : db.gpus) {
      std::cout << "\n  " << g.name << "  (" << (g.vendor.empty() ? "" : g.vendor + " ")
                << g.architecture << "; "
                << (g.compute_units > 0 ? std::to_string(g.compute_units) + " " + g.unit_name + "s"
                                        : g.unit_name + " count not stated")
                << ", "
                << (g.clock_mhz ? format_fixed(*g.clock_mhz, 0) + " MHz" : "clock not stated")
                << "; " << g.figures.size() << " figures)\n";
      if (!g.aliases.empty()) {
        std::cout << "    also: ";
        for (std::size_t i = 0; i < g.aliases.size(); ++i)
          std::cout << (i ? ", " : "") << g.aliases[i];
        std::cout << "\n";
      }
      for (const ReferenceSource& s : g.sources)
        std::cout << "    source: " << s.title << " [" << s.document << "]\n";
    }
    if (db.gpus.empty()) std::cout << "  (none)\n";
    std::cout << "\nUse: gpudissect compare RESULT.json --reference \"NAME\"; "
                 "gpudissect reference show \"NAME\" lists a GPU's figures.\n";
    return 0;
  }

  int show(const std::string& argv0) {
    const ReferenceDb db = open_reference_db(argv0);
    const ReferenceGpu& g = lookup(db, show_name_);
    std::cout << g.name << " (" << g.vendor << " " << g.architecture << ")  " << g.file.string()
              << "\n";
    std::cout << "  " << g.unit_name << "s: "
              << (g.compute_units > 0 ? std::to_string(g.compute_units) : std::string("not stated"))
              << (g.compute_units_note.empty() ? "" : "  (" + g.compute_units_note + ")") << "\n";
    std::cout << "  clock: "
              << (g.clock_mhz ? format_fixed(*g.clock_mhz, 0) + " MHz" : "not stated")
              << (g.clock_note.empty() ? "" : "  (" + g.clock_note + ")") << "\n";
    for (const auto& [k, v] : g.facts) std::cout << "  " << k << ": " << v << "\n";
    std::cout << "\n";
    for (const ReferenceFigure& f : g.figures) {
      std::string v = (f.qualifier.empty() ? "" : f.qualifier + " ") +
                      report::compare_number(f.value, f.unit) +
                      (f.unit == "bytes" ? "" : " " + f.unit);
      if (f.per_sm_per_clk)
        v += ", " + report::compare_number(*f.per_sm_per_clk, f.per_sm_per_clk_unit) + " " +
             f.per_sm_per_clk_unit;
      std::cout << "  " << f.id << "  " << v << "  [" << f.source << "]\n      " << f.method
                << "\n";
    }
    std::cout << "\nSources:\n";
    for (const ReferenceSource& s : g.sources)
      std::cout << "  [" << s.key << "] " << s.title << " (" << s.document << ")\n";
    return 0;
  }

  int run_compare(const std::string& argv0) {
    check_writable(html_);
    check_writable(csv_);
    check_writable(json_);
    if (allow_missing_) throw UsageError("--allow-missing needs --baseline");
    if (include_host_) throw UsageError("--include-host needs --baseline");
    if (markdown_) throw UsageError("--markdown needs --parity");
    if (cross_backend_ && side_by_side_)
      throw UsageError("--cross-backend and --side-by-side exclude each other");
    std::vector<CompareInput> inputs;
    for (const std::string& f : files_) inputs.push_back(load_input(f));
    const bool two_results = inputs.size() == 2 && references_.empty();
    if (cross_backend_) {
      if (!two_results)
        throw UsageError("--cross-backend compares exactly two result files (got " +
                         std::to_string(files_.size()) + " files and " +
                         std::to_string(references_.size()) + " --reference)");
      return run_cross(std::move(inputs));
    }
    if (!side_by_side_ && two_results && cross_backend_inputs(inputs[0], inputs[1]))
      return run_cross(std::move(inputs));
    if (tolerance_set())
      throw UsageError("--tolerance needs --baseline, --parity or a cross-backend comparison");
    if (!json_.empty()) throw UsageError("--json needs --parity or a cross-backend comparison");
    if (!references_.empty()) {
      const ReferenceDb db = open_reference_db(argv0);
      for (const std::string& name : references_)
        inputs.push_back(input_from_reference(lookup(db, name)));
    }
    if (inputs.size() < 2)
      throw UsageError(
          "compare needs two or more inputs (result files and --reference GPUs), "
          "or one file with --baseline");
    const Comparison c = compare(std::move(inputs));
    report::print_comparison(std::cout, c);
    std::vector<std::string> written;
    if (!csv_.empty()) {
      report::write_comparison_csv(csv_, c);
      written.push_back(csv_);
    }
    if (!html_.empty()) {
      for (const auto& f : report::write_comparison_html(html_, c, png_))
        written.push_back(f.string());
      written.push_back(html_);
    }
    print_written(written);
    return 0;
  }

  static void print_written(const std::vector<std::string>& written) {
    if (written.empty()) return;
    std::cerr << "wrote:";
    for (const auto& w : written) std::cerr << " " << w;
    std::cerr << "\n";
  }

  double tolerance_or_default() const {
    if (!tolerance_set()) return 0.05;
    auto t = parse_tolerance(tolerance_);
    if (!t) throw UsageError("--tolerance: '" + tolerance_ + "' is not a percentage (e.g. 3%)");
    return *t;
  }

  // A result file (not a reference) with its backend named: what the backend modes need.
  static void need_backend(const CompareInput& in, const std::string& mode) {
    if (in.reference)
      throw UsageError(in.origin + ": " + mode +
                       " compares results of this tool, not reference files");
    if (in.backend.empty())
      throw UsageError(in.origin + ": device.backend is empty: " + mode +
                       " needs each run's backend (cuda, opencl, vulkan)");
  }

  // Two runs of one GPU through different backends (or forced by --cross-backend).
  int run_cross(std::vector<CompareInput> inputs) {
    const double tol = tolerance_or_default();
    for (const CompareInput& in : inputs) need_backend(in, "a cross-backend comparison");
    const CrossBackendReport rep = compare_backends(inputs[0], inputs[1], tol);
    report::print_cross_backend(std::cout, rep, verbose_);
    std::vector<std::string> written;
    if (!csv_.empty()) {
      report::write_cross_backend_csv(csv_, rep);
      written.push_back(csv_);
    }
    if (!json_.empty()) {
      report::write_cross_backend_json(json_, rep);
      written.push_back(json_);
    }
    if (!html_.empty()) {
      for (const auto& f : report::write_comparison_html(html_, compare(std::move(inputs)), png_))
        written.push_back(f.string());
      written.push_back(html_);
    }
    print_written(written);
    return 0;
  }

  int run_parity() {
    check_writable(csv_);
    check_writable(json_);
    if (!html_.empty() || png_)
      throw UsageError("--parity writes no page (-o, --png): use --markdown, --csv or --json");
    if (!references_.empty()) throw UsageError("--reference cannot be combined with --parity");
    if (allow_missing_) throw UsageError("--allow-missing needs --baseline");
    if (include_host_) throw UsageError("--include-host needs --baseline");
    if (cross_backend_ || side_by_side_)
      throw UsageError("--parity cannot be combined with --cross-backend or --side-by-side");
    if (files_.size() < 2)
      throw UsageError(
          "--parity needs two or more result files (the first is what the others are counted "
          "against)");
    const double tol = tolerance_or_default();
    std::vector<CompareInput> inputs;
    for (const std::string& f : files_) {
      inputs.push_back(load_input(f));
      need_backend(inputs.back(), "--parity");
    }
    const ParityTable t = backend_parity(std::move(inputs), tol);
    if (markdown_)
      report::print_parity_markdown(std::cout, t);
    else
      report::print_parity(std::cout, t);
    std::vector<std::string> written;
    if (!csv_.empty()) {
      report::write_parity_csv(csv_, t);
      written.push_back(csv_);
    }
    if (!json_.empty()) {
      report::write_parity_json(json_, t);
      written.push_back(json_);
    }
    print_written(written);
    return 0;
  }

  bool tolerance_set() const { return !tolerance_.empty(); }

  int run_baseline(const std::string&) {
    check_writable(html_);
    check_writable(csv_);
    if (files_.size() != 1)
      throw UsageError(
          "--baseline compares exactly one new result file against the baseline (got " +
          std::to_string(files_.size()) + ")");
    if (!references_.empty()) throw UsageError("--reference cannot be combined with --baseline");
    if (parity_ || cross_backend_ || side_by_side_ || markdown_ || !json_.empty())
      throw UsageError(
          "--parity, --cross-backend, --side-by-side, --markdown and --json cannot be combined "
          "with --baseline");
    const double tol = tolerance_or_default();
    CompareInput base = load_input(baseline_);
    CompareInput cur = load_input(files_.front());
    if (base.reference || cur.reference)
      throw UsageError("--baseline compares two results of this tool, not reference files");
    std::vector<CompareInput> two = {base, cur};
    label_inputs(two);
    base.label = two[0].label;
    cur.label = two[1].label;
    if (base.label == cur.label) cur.label += " (new)";
    const BaselineReport rep = compare_baseline(base, cur, tol, allow_missing_, include_host_);
    report::print_baseline(std::cout, rep, verbose_);
    if (!csv_.empty()) report::write_baseline_csv(csv_, rep);
    if (!html_.empty()) report::write_comparison_html(html_, compare({base, cur}), png_, &rep);
    return rep.regressions() ? kExitRegression : 0;
  }

  CLI::App* compare_ = nullptr;
  CLI::App* reference_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  std::vector<std::string> files_, references_;
  std::string html_, csv_, json_, baseline_, tolerance_, show_name_;
  bool verbose_ = false, png_ = false, allow_missing_ = false, include_host_ = false;
  bool cross_backend_ = false, side_by_side_ = false, parity_ = false, markdown_ = false;
};

}  // namespace

std::unique_ptr<CompareCommands> add_compare_commands(CLI::App& app) {
  return std::make_unique<Commands>(app);
}

}  // namespace gd::cli
