// gpudissect: measure a GPU's memory hierarchy and write the report.
//   gpudissect list | run [probes] [options] | report FILE -o report.html
// Exit codes: 0 done, 1 a measurement failed (what was measured is still written),
// 2 bad input, 3 a soak figure regressed, 5 --require-idle and the GPU is shared (nothing
// measured), 6 --deadline passed, 130/143 interrupted (what was measured is still written).
// `run` lives in cli/run_cmd.cpp (its steps in run_steps.cpp, the soak in soak_cmd.cpp).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "backends.hpp"
#include "compare_cmd.hpp"  // compare, reference (issue 10)
#include "fleet_cmd.hpp"    // fleet (issue 12)
#include "gpudissect/json_read.hpp"
#include "gpudissect/result.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "run_cmd.hpp"
#include "run_steps.hpp"  // attach_references, join

namespace fs = std::filesystem;
using namespace gd;

namespace {

using cli::join;

int cmd_list() {
  std::cout << "Probes:";
  for (const Probe* p : probe_registry().all()) std::cout << " " << p->name();
  std::cout << "  (gpudissect run --help describes each)\n\n";
  const cli::Listing l = cli::list_devices();
  if (l.devices.empty()) std::cout << "No devices.\n";
  for (const auto& d : l.devices) {
    std::cout << d.id << "  " << d.name << "\n    " << d.summary << "\n    paths:";
    std::vector<std::string> yes, no;
    for (const auto& [p, s] : d.paths) (s.ok ? yes : no).push_back(to_string(p));
    std::cout << " " << join(yes) << "\n";
    if (!no.empty()) std::cout << "    not available: " << join(no) << "\n";
  }
  for (const auto& n : l.notes) std::cout << "(" << n << ")\n";
  return 0;
}

// `report`'s arguments.
struct ReportArgs {
  std::string in, out, csv_dir, json_out;
  bool png = false;
};

int cmd_report(const ReportArgs& a) {
  const std::string &in = a.in, &out = a.out, &csv_dir = a.csv_dir, &json_out = a.json_out;
  const bool png = a.png;
  if (!std::ifstream(in)) throw cli::UsageError("cannot read " + in);
  nlohmann::json j;
  try {
    j = read_json_file(in);
  } catch (const std::exception& e) {
    throw cli::UsageError(in + ": " + e.what());
  }
  const ProbeRegistry& registry = probe_registry();
  RunResult r;
  try {
    r = run_result_from_json(j, registry);
  } catch (const std::exception& e) {
    throw cli::UsageError(in + ": " + e.what());
  }
  const fs::path html = out.empty() ? fs::path(in).replace_extension(".html") : fs::path(out);
  try {
    report::ensure_writable(html);
    if (!json_out.empty()) report::ensure_writable(json_out);
  } catch (const std::runtime_error& e) {
    throw cli::UsageError(e.what());
  }
  report::HtmlOptions ho;
  ho.png = png;
  ho.png_dir = html.has_parent_path() ? html.parent_path() : fs::path(".");
  ReferenceDb refs;
  cli::attach_references(ho, refs);
  std::vector<fs::path> written = report::write_html(html, r, registry, ho);
  written.push_back(html);
  if (!csv_dir.empty())
    for (const auto& c : report::write_csv(csv_dir, r, registry)) written.push_back(c);
  if (!json_out.empty()) {
    report::write_json(json_out, r, registry);
    written.push_back(json_out);
  }
  report::print_summary(std::cout, r, registry);
  std::cerr << "wrote:";
  for (const auto& w : written) std::cerr << " " << w.string();
  std::cerr << "\n";
  return 0;
}

// `report` and its options.
CLI::App* add_report_command(CLI::App& app, ReportArgs& ra) {
  auto* rep = app.add_subcommand(
      "report", "Write the HTML report (and charts) from a saved JSON; no GPU needed");
  rep->add_option("file", ra.in, "A JSON written by gpudissect run")->required();
  rep->add_option("-o,--output", ra.out, "HTML file (default: next to the JSON)");
  rep->add_flag("--png", ra.png, "Also write the charts as PNG files next to the HTML");
  rep->add_option("--csv-dir", ra.csv_dir, "Also write the CSV files into this folder");
  rep->add_option("--json", ra.json_out,
                  "Also write the result back as JSON of the current schema version (a file "
                  "without a figures list gets the figures this version derives)");
  return rep;
}

// The chosen command, with bad input (exit 2) and failures (exit 1) said on stderr.
template <class F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const cli::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const report::RefusedOutput& e) {  // an output path that is a device, a folder...
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpudissect: dissects a GPU's microarchitecture by microbenchmarks.\n"
      "Every cache level on each memory path (capacity, latency, confidence), bandwidth at\n"
      "every level, what one SM does per clock for each instruction, atomics; writes JSON\n"
      "(with a flat list of headline figures), CSV and an HTML report with charts."};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print version, the backends built in, and NVML's presence");
  app.add_subcommand("list",
                     "List CUDA GPUs and OpenCL devices and the memory paths each supports");
  cli::RunArgs run_args;
  cli::add_run_command(app, run_args);
  ReportArgs report_args;
  add_report_command(app, report_args);
  // ---- compare / reference subcommands (cli/compare_cmd.cpp) ----
  auto compare_cmds = cli::add_compare_commands(app);
  auto fleet_cmd = cli::add_fleet_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    std::cerr << "valid commands: list, run, report (gpudissect --help explains each)\n";
    return 2;
  }
  return guarded([&] {
    if (version) {
      std::cout << cli::version_text();
      return 0;
    }
    if (app.got_subcommand("list")) return cmd_list();
    if (app.got_subcommand("run"))
      return cli::cmd_run(run_args, std::vector<std::string>(argv, argv + argc));
    if (app.got_subcommand("report")) return cmd_report(report_args);
    if (compare_cmds->chosen()) return compare_cmds->run(argv[0]);  // compare, reference
    if (fleet_cmd->chosen()) return fleet_cmd->run(argc, argv);
    std::cout << app.help();
    return 2;
  });
}
