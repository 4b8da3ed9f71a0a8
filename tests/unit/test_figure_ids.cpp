// Figure ids are declared, never derived from a display name: the pattern matcher, each
// probe's declarations against every committed result, and names no probe declares.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "bandwidth/bandwidth.hpp"
#include "committed_results.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/compare.hpp"  // well_formed_figure_id
#include "gpudissect/figure_ids.hpp"
#include "gpudissect/result.hpp"
#include "host_memory/host_memory.hpp"
#include "registry.hpp"

namespace gd {
namespace {

namespace fs = std::filesystem;

TEST(FigureIdPattern, ExactAndPlaceholders) {
  EXPECT_TRUE(figure_id_matches("bandwidth.dram.read", "bandwidth.dram.read"));
  EXPECT_FALSE(figure_id_matches("bandwidth.dram.read", "bandwidth.dram.reads"));
  EXPECT_FALSE(figure_id_matches("bandwidth.dram.read", "bandwidth.dram.rea"));
  EXPECT_TRUE(figure_id_matches("latency.{path}.{level}", "latency.global.L2_near"));
  EXPECT_TRUE(figure_id_matches("latency.{path}.{level}.cycles", "latency.l2.L2_far.cycles"));
  // A placeholder is one segment: never empty, never a dot, nothing past the pattern's end.
  EXPECT_FALSE(figure_id_matches("latency.{path}.{level}", "latency.global"));
  EXPECT_FALSE(figure_id_matches("latency.{path}.{level}", "latency.global."));
  EXPECT_FALSE(figure_id_matches("latency.{path}.{level}", "latency.global.L2.cycles"));
  EXPECT_FALSE(figure_id_matches("compute.{op}", "compute.fp32.fma"));
  EXPECT_TRUE(figure_id_matches("compute.{class}.{op}", "compute.fp32.fma"));
  // Only [A-Za-z0-9_] in a placeholder: a slug's '-' or a label's ' ' never matches.
  EXPECT_FALSE(figure_id_matches("bandwidth.{x}", "bandwidth.read-best"));
  EXPECT_FALSE(figure_id_matches("bandwidth.{x}", "bandwidth.read best"));
  // Beside literal text in one segment, with backtracking.
  EXPECT_TRUE(figure_id_matches("memory.partition.{path}.capacity_{n}warps",
                                "memory.partition.global.capacity_4warps"));
  EXPECT_TRUE(figure_id_matches("x.{a}_warps", "x.capacity_1_warps"));
  EXPECT_FALSE(figure_id_matches("memory.partition.{path}.capacity_{n}warps",
                                 "memory.partition.global.capacity_warps"));
  EXPECT_TRUE(figure_id_matches("memory.tlb.L{n}.reach", "memory.tlb.L1.reach"));
  EXPECT_TRUE(figure_id_matches("atomics.{space}.{kind}_pingpong", "atomics.global.cas_pingpong"));
  // An unclosed placeholder matches nothing.
  EXPECT_FALSE(figure_id_matches("latency.{path", "latency.{path"));
  EXPECT_FALSE(figure_id_matches("", "x"));
  EXPECT_TRUE(figure_id_declared({"a.b", "c.{d}"}, "c.e"));
  EXPECT_FALSE(figure_id_declared({"a.b", "c.{d}"}, "c"));
  EXPECT_FALSE(figure_id_declared({}, "a.b"));
}

TEST(FigureIds, EveryProbeDeclaresSome) {
  for (const Probe* p : probe_registry().all()) {
    const std::vector<std::string> ids = p->figure_ids();
    EXPECT_FALSE(ids.empty()) << p->name();
    for (const std::string& id : ids) {
      // A declaration is a well-formed id with its placeholders filled.
      std::string filled;
      for (std::size_t i = 0; i < id.size(); ++i) {
        if (id[i] != '{') {
          filled += id[i];
          continue;
        }
        const std::size_t close = id.find('}', i);
        ASSERT_NE(close, std::string::npos) << id;
        filled += "x";
        i = close;
      }
      EXPECT_TRUE(well_formed_figure_id(filled)) << p->name() << ": " << id;
    }
  }
}

// Ids the committed results carry that were derived from a display name and are no longer
// published (the bandwidth probe's slug of "read, best footprint (no L1 plateau found)").
const std::set<std::string> kRetired = {"bandwidth.read_best_footprint_no_l1_plateau_found"};

// Every committed result (results/**/*.json and *.json.gz): its figures re-derived by each probe
// carry declared ids, and every id it was published with is declared by some probe or retired.
TEST(FigureIds, CommittedResultsAreDeclared) {
  const ProbeRegistry& registry = probe_registry();
  int files = 0, figures = 0;
  std::set<std::string> committed;
  for (const fs::path& path : gd::testing::committed_json_files(GD_RESULTS)) {
    const std::optional<nlohmann::json> doc = gd::testing::read_committed_json(path);
    if (!doc) continue;  // not a document of ours
    const nlohmann::json& j = *doc;
    if (!j.is_object() || !j.contains("probes") || !j.contains("figures")) continue;
    SCOPED_TRACE(path.string());
    ++files;
    for (const auto& f : j["figures"])
      if (f.is_object() && f.contains("id")) committed.insert(f["id"].get<std::string>());
    const RunResult r = run_result_from_json(j, registry);
    figures += expect_figure_ids_declared(r);
  }
  EXPECT_GT(files, 10);
  EXPECT_GT(figures, 1000);
  for (const std::string& id : committed) {
    if (kRetired.count(id)) continue;
    bool declared = false;
    for (const Probe* p : registry.all())
      declared = declared || figure_id_declared(p->figure_ids(), id);
    EXPECT_TRUE(declared) << id;
  }
  EXPECT_GT(committed.size(), 300u);
}

// A figure name no probe declares gives no figure, never a slug of the name.
TEST(FigureIds, UndeclaredNamesGiveNoFigure) {
  BandwidthProbeResult b;
  BandwidthFigure f;
  f.gbps = Summary{100, 99, 101, 98, 102, 3};
  f.name = "read, best footprint (no L1 plateau found)";
  b.figures.push_back(f);
  f.name = "device memory read";
  b.figures.push_back(f);
  RunResult r;
  r.put(b);
  const std::vector<Figure> figs = probe_registry().find("bandwidth")->figures(r);
  ASSERT_EQ(figs.size(), 1u);
  EXPECT_EQ(figs[0].id, "bandwidth.dram.read");

  HostMemoryResult h;
  for (const char* name : {"memory read", "memory write", "memory copy",
                           "memory write, non-temporal", "memory something new"}) {
    f.name = name;
    h.figures.push_back(f);
  }
  RunResult rh;
  rh.put(h);
  std::vector<std::string> ids;
  for (const Figure& x : probe_registry().find("host")->figures(rh)) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"host.memory.read", "host.memory.write",
                                           "host.memory.copy", "host.memory.write_streaming"}));
  EXPECT_EQ(expect_figure_ids_declared(rh), 4);
}

}  // namespace
}  // namespace gd
