// The links probe's measurement, against the LinksKernels contract
// (probes/links/links.hpp); the CUDA kernels are probes/links/cuda.cu.
#include "links/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"
#include "links/run_internal.hpp"

namespace gd {

using namespace links_run;

namespace {

// One point of a transfer curve from its timing: GB/s per repeat (bytes / seconds).
BandwidthPoint transfer_point(uint64_t bytes, const TransferTiming& t) {
  BandwidthPoint pt;
  pt.x = double(bytes);
  pt.read_bytes = t.bytes_per_repeat;
  if (!t.check_error.empty()) {
    pt.status = {StatusCode::error, "check failed: " + t.check_error};
    return pt;
  }
  std::vector<double> gbps;
  for (double s : t.seconds)
    if (s > 0) gbps.push_back(double(t.bytes_per_repeat) / s / 1e9);
  if (gbps.empty()) {
    pt.status = {StatusCode::error, "no timed repeat"};
    return pt;
  }
  pt.gbps = summarize(gbps);
  pt.seconds = summarize(t.seconds);
  return pt;
}

// The SM kernels' best at the largest size over a few thread shapes (blocks of 512 threads
// per SM x 16-byte accesses in flight per thread): on the H200 pair the default (4 x 4) read
// 374.5 GB/s where nvbandwidth's one block per SM with more loads in flight read 376.2, so
// the shape matters at the 0.5 % level and is searched, not assumed. The largest point
// becomes the best shape's, and the curve's note lists every shape tried.
void best_sm_shape(Ctx& c, LinkPair& pair, const std::string& key, BandwidthCurve& curve) {
  if (curve.points.empty() || !curve.points.back().status.ok() || !curve.points.back().gbps) return;
  const bool write = key == "sm.write";
  const std::vector<std::pair<int, int>> shapes =
      write ? std::vector<std::pair<int, int>>{{1, 4}, {2, 4}}
            : std::vector<std::pair<int, int>>{{4, 4}, {1, 8}, {2, 8}, {4, 8}, {2, 4}, {1, 12}};
  // Reads make their passes in one launch: at the largest size, four, so that one launch's
  // start and tail are spread over 4 GiB (nvbandwidth's copy loops inside its kernel too).
  const int passes = write ? 0 : 4;
  BandwidthPoint& best = curve.points.back();
  const uint64_t bytes = uint64_t(best.x);
  std::string tried = "largest size, blocks of 512 threads per SM x 16 B " +
                      std::string(write ? "stores" : "loads") + " in flight per thread: 4x4 " +
                      format_fixed(best.gbps->median, 1) +
                      (passes ? "; " + std::to_string(passes) + " passes a launch:" : "");
  std::string chosen = "4x4";
  std::string sep = passes ? " " : ", ";
  for (const auto& [blocks, loads] : shapes) {
    PeerSmRequest r;
    r.src = pair.src;
    r.dst = pair.dst;
    r.write = write;
    r.bytes = bytes;
    r.iterations =
        std::max(passes, links_iterations(bytes, c.opt.target_bytes, c.opt.max_iterations));
    r.repeats = c.opt.repeats;
    r.timeout_s = c.opt.timeout_s;
    r.blocks_per_sm = blocks;
    r.loads_per_thread = loads;
    const std::string shape = std::to_string(blocks) + "x" + std::to_string(loads);
    try {
      const BandwidthPoint pt = transfer_point(bytes, c.k.peer_sm(r));
      if (!pt.status.ok() || !pt.gbps) {
        // A failed check is the kernel's error whatever its shape: the figure is not kept.
        tried += sep + shape + " " + pt.status.name();
        c.error("p2p " + key + " " + std::to_string(pair.src) + "->" + std::to_string(pair.dst) +
                    " shape " + shape,
                pt.status.reason);
        curve.status = {StatusCode::error, shape + ": " + pt.status.reason};
        best.status = {StatusCode::error, shape + ": " + pt.status.reason};
        break;
      }
      tried += sep + shape + " " + format_fixed(pt.gbps->median, 1);
      sep = ", ";
      if (pt.gbps->median > best.gbps->median) {
        best = pt;
        chosen = shape;
      }
    } catch (const std::exception& e) {
      tried += sep + shape + " failed (" + std::string(e.what()) + ")";
      sep = ", ";
    }
  }
  curve.note = tried + " GB/s; the figure is " + chosen;
}

void p2p_curve(Ctx& c, LinkPair& pair, const std::string& key, int& n, int total) {
  BandwidthCurve& curve = pair.curves[key];
  curve.x_unit = "transfer_bytes";
  const bool ce = key.rfind("ce.", 0) == 0;
  curve.timed_instruction = ce ? std::optional<std::string>("cudaMemcpyPeerAsync") : std::nullopt;
  const auto t0 = Clock::now();
  for (uint64_t bytes : links_sizes(c.opt.p2p_min, c.opt.p2p_max, c.opt.p2p_step)) {
    c.progress.step(kName,
                    "p2p " + std::to_string(pair.src) + "->" + std::to_string(pair.dst) + " " + key,
                    ++n, total, format_bytes(double(bytes)));
    if (c.stop) {
      curve.status = {StatusCode::interrupted, "stopped by the user"};
      break;
    }
    const int iters = links_iterations(bytes, c.opt.target_bytes, c.opt.max_iterations);
    BandwidthPoint pt;
    try {
      TransferTiming t;
      if (ce) {
        PeerCopyRequest r;
        r.src = pair.src;
        r.dst = pair.dst;
        r.mode = key == "ce.read"    ? PeerCopyMode::read
                 : key == "ce.write" ? PeerCopyMode::write
                                     : PeerCopyMode::bidir;
        r.bytes = bytes;
        r.iterations = iters;
        r.repeats = c.opt.repeats;
        r.timeout_s = c.opt.timeout_s;
        t = c.k.peer_copy(r);
      } else {
        PeerSmRequest r;
        r.src = pair.src;
        r.dst = pair.dst;
        r.write = key == "sm.write";
        r.bytes = bytes;
        r.iterations = iters;
        r.repeats = c.opt.repeats;
        r.timeout_s = c.opt.timeout_s;
        t = c.k.peer_sm(r);
        if (!t.instruction.empty()) curve.timed_instruction = t.instruction;
      }
      pt = transfer_point(bytes, t);
    } catch (const AllocationFailed& e) {
      pt.x = double(bytes);
      pt.status = {StatusCode::skipped, e.what()};
    } catch (const BackendError& e) {
      pt.x = double(bytes);
      pt.status = {StatusCode::error, e.what()};
    }
    if (pt.status.code == StatusCode::error) {
      c.error("p2p " + key + " " + std::to_string(pair.src) + "->" + std::to_string(pair.dst) +
                  " at " + format_bytes(double(bytes)),
              pt.status.reason);
      if (curve.status.ok()) curve.status = {StatusCode::error, pt.status.reason};
    }
    curve.points.push_back(pt);
  }
  if (!ce && !c.stop) best_sm_shape(c, pair, key, curve);
  curve.wall_seconds = seconds_since(t0);
}

// A latency from a backend's timings: an error where the check failed or nothing was timed,
// else the per-step ns and cycles summarised.
void take_latency(LinkLatency& l, const std::string& check_error, const std::vector<double>& ns,
                  const std::vector<double>& cycles, std::optional<double> clock_mhz) {
  if (!check_error.empty()) {
    l.status = {StatusCode::error, check_error};
  } else if (ns.empty()) {
    l.status = {StatusCode::error, "no timed repeat"};
  } else {
    l.status = {};
    l.ns = summarize(ns);
    if (!cycles.empty()) l.cycles = summarize(cycles);
    l.clock_mhz = clock_mhz;
  }
}

// Empty where a peer chase ended on the line the chain reaches after the hops it walked;
// else what went wrong (with the SM, for a chase run on a chosen one).
std::string chase_end_error(const ChaseTiming& t, const PeerChaseRequest& r,
                            const std::vector<uint32_t>& next) {
  const uint64_t walked =
      t.hops_walked ? t.hops_walked : r.warmup_hops + r.hops_per_repeat * r.repeats;
  const uint32_t want = walk(next, 0, walked);
  if (t.end_line == want) return {};
  return "the chase" + (r.sm >= 0 ? " from SM " + std::to_string(r.sm) : std::string()) +
         " ended on line " + std::to_string(t.end_line) + ", the chain says " +
         std::to_string(want);
}

// The chase again from SMs spread over the reader (every sms/n-th), shorter (3 repeats): on
// an H200 pair one block, wherever it lands, reads anything from 802 to 857 ns per hop, so
// where the reading SM sits is part of the figure. A failed check or a backend error here is
// the pair's chase error, as for the one-block chase.
void chase_by_sm(Ctx& c, LinkPair& pair, const std::vector<uint32_t>& next,
                 const PeerChaseRequest& base) {
  LinkLatency& l = pair.chase;
  const int sms =
      pair.dst < int(c.out.topology.gpus.size()) ? c.out.topology.gpus[pair.dst].sms : 0;
  const int n = std::min(c.opt.chase_sms, sms);
  for (int k = 0; k < n && !c.stop; ++k) {
    PeerChaseRequest r = base;
    r.sm = int(int64_t(k) * sms / n);
    r.repeats = std::min(3, base.repeats);
    // The chain is already in the peer's L2 from the one-block chase: the warm-up only has to
    // bring its page into this SM's translation caches.
    r.warmup_hops = std::min<uint64_t>(base.warmup_hops, 256);
    try {
      const ChaseTiming t = c.k.peer_chase(r);
      if (const std::string bad = chase_end_error(t, r, next); !bad.empty())
        throw BackendError(bad);
      if (t.ns_per_hop.empty()) continue;
      LinkLatency::BySm s;
      s.sm = t.sm >= 0 ? t.sm : r.sm;
      s.ns = median(t.ns_per_hop);
      if (!t.cycles_per_hop.empty()) s.cycles = median(t.cycles_per_hop);
      l.by_sm.push_back(s);
    } catch (const BackendError& e) {
      l.status = {StatusCode::error, e.what()};
      l.by_sm.clear();
      c.error("p2p chase " + std::to_string(pair.dst) + " reading " + std::to_string(pair.src) +
                  " from SM " + std::to_string(r.sm),
              e.what());
      return;
    }
  }
}

void p2p_latency(Ctx& c, LinkPair& pair) {
  // The chase: one thread of dst through a chain in src's memory (data flows src -> dst).
  {
    LinkLatency& l = pair.chase;
    const uint64_t lines = std::max<uint64_t>(2, c.opt.chase_footprint / c.opt.chase_stride);
    const std::vector<uint32_t> next = sattolo_cycle(uint32_t(lines));
    PeerChaseRequest r;
    r.executor = pair.dst;
    r.owner = pair.src;
    r.next = &next;
    r.stride_bytes = c.opt.chase_stride;
    r.warmup_hops = lines;
    r.hops_per_repeat = std::max<uint64_t>(1024, std::min<uint64_t>(lines, 8192));
    r.repeats = c.opt.repeats;
    r.timeout_s = c.opt.timeout_s;
    l.footprint_bytes = lines * c.opt.chase_stride;
    l.hops_or_round_trips = r.hops_per_repeat;
    try {
      const ChaseTiming t = c.k.peer_chase(r);
      take_latency(l, chase_end_error(t, r, next), t.ns_per_hop, t.cycles_per_hop, t.clock_mhz);
    } catch (const BackendError& e) {
      l.status = {StatusCode::error, e.what()};
    }
    if (l.status.code == StatusCode::error)
      c.error("p2p chase " + std::to_string(pair.dst) + " reading " + std::to_string(pair.src),
              l.status.reason);
    else
      chase_by_sm(c, pair, next, r);
  }
  // The ping-pong: src starts, each flag in its reader's memory.
  {
    LinkLatency& l = pair.ping_pong;
    PeerPingPongRequest r;
    r.a = pair.src;
    r.b = pair.dst;
    r.round_trips = c.opt.round_trips;
    r.repeats = c.opt.repeats;
    r.timeout_s = c.opt.timeout_s;
    l.hops_or_round_trips = r.round_trips;
    try {
      const PeerPingPongTiming t = c.k.peer_ping_pong(r);
      take_latency(l, t.check_error, t.ns_per_handoff, t.cycles_per_handoff, t.clock_mhz);
    } catch (const BackendError& e) {
      l.status = {StatusCode::error, e.what()};
    }
    if (l.status.code == StatusCode::error)
      c.error("p2p ping-pong " + std::to_string(pair.src) + "<->" + std::to_string(pair.dst),
              l.status.reason);
  }
}

void p2p_part(Ctx& c) {
  LinksProbeResult& out = c.out;
  const bool bw = c.opt.parts.count("p2p") > 0, lat = c.opt.parts.count("latency") > 0;
  if (!bw && !lat) {
    out.p2p = {StatusCode::skipped, "not asked for (links.parts)"};
    return;
  }
  if (out.gpus < 2) {
    out.p2p = {StatusCode::unsupported, "one GPU: no peer"};
    return;
  }
  const std::vector<std::string> keys = {"ce.read", "ce.write", "ce.bidir", "sm.read", "sm.write"};
  const int sizes = int(links_sizes(c.opt.p2p_min, c.opt.p2p_max, c.opt.p2p_step).size());
  const int total = out.gpus * (out.gpus - 1) * (bw ? int(keys.size()) * sizes : 0);
  int n = 0, ok_pairs = 0;
  std::string no_peer;
  for (int src = 0; src < out.gpus && !c.stop; ++src)
    for (int dst = 0; dst < out.gpus && !c.stop; ++dst) {
      if (src == dst) continue;
      LinkPair& pair = out.pairs.emplace_back();
      pair.src = src;
      pair.dst = dst;
      const Support s = c.k.peer_access(src, dst);
      if (!s.ok) {
        pair.status = {StatusCode::unsupported, s.reason};
        pair.chase.status = pair.ping_pong.status = pair.status;
        if (no_peer.empty()) no_peer = s.reason;
        n += int(keys.size()) * sizes * (bw ? 1 : 0);
        continue;
      }
      ++ok_pairs;
      if (bw)
        for (const std::string& key : keys) {
          if (c.stop) break;
          p2p_curve(c, pair, key, n, total);
        }
      if (lat && !c.stop) {
        c.progress.step(kName, "p2p latency", n, total,
                        std::to_string(src) + "<->" + std::to_string(dst));
        p2p_latency(c, pair);
      } else if (!lat) {
        pair.chase.status =
            pair.ping_pong.status = {StatusCode::skipped, "not asked for (links.parts)"};
      }
    }
  out.p2p =
      ok_pairs ? Status{} : Status{StatusCode::unsupported, "no pair has peer access: " + no_peer};
}

}  // namespace

std::vector<uint64_t> links_sizes(uint64_t lo, uint64_t hi, int step) {
  std::vector<uint64_t> v;
  if (lo == 0 || hi < lo || step < 2) return v;
  for (uint64_t s = lo; s < hi; s *= uint64_t(step)) {
    v.push_back(s);
    if (s > hi / uint64_t(step)) break;
  }
  if (v.empty() || v.back() != hi) v.push_back(hi);
  return v;
}

int links_iterations(uint64_t bytes, uint64_t target, int max_iterations) {
  if (bytes == 0) return 1;
  const uint64_t n = target / bytes;
  return int(std::clamp<uint64_t>(n, 1, uint64_t(std::max(1, max_iterations))));
}

std::vector<OptionSpec> links_option_specs() {
  return {
      {"quick", "0",
       "fewer sizes (x32 P2P steps, one host size, x4 NCCL steps from 1K), 3 repeats"},
      {"repeats", "5", "timed repeats per point"},
      {"parts", "p2p,latency,host,nccl", "what to measure"},
      {"p2p_min", "4K", "smallest peer transfer"},
      {"p2p_max", "1G", "largest peer transfer (the figures are read here)"},
      {"p2p_step", "2", "factor between peer transfer sizes"},
      {"host_min", "4K", "smallest host transfer per GPU"},
      {"host_max", "1G", "largest host transfer per GPU"},
      {"host_step", "4", "factor between host transfer sizes"},
      {"nccl_min", "8", "smallest collective (bytes, nccl-tests' size)"},
      {"nccl_max", "1G", "largest collective"},
      {"nccl_step", "2", "factor between collective sizes"},
      {"chase_footprint", "2M", "the peer chain's footprint"},
      {"chase_sms", "1024",
       "reading SMs, spread over the GPU and capped at its count (so by default every SM), that "
       "chase the peer's memory each in turn (0: none; 0 with quick)"},
      {"round_trips", "1000", "ping-pong round trips per repeat"},
      {"timeout", "10", "seconds one operation may take before it is an error"},
  };
}

LinksOptions parse_links_options(const std::map<std::string, std::string>& kv) {
  LinksOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = options::flag(kName, k, v);
    else if (k == "repeats")
      o.repeats = options::integer(kName, k, v, 1, 100);
    else if (k == "parts") {
      o.parts.clear();
      o.parts_given = true;
      for (const std::string& p : options::list(v)) {
        if (p != "p2p" && p != "latency" && p != "host" && p != "nccl")
          throw std::invalid_argument("option links.parts: unknown part '" + p +
                                      "' (p2p, latency, host, nccl)");
        o.parts.insert(p);
      }
    } else if (k == "p2p_min")
      o.p2p_min = options::bytes(kName, k, v);
    else if (k == "p2p_max")
      o.p2p_max = options::bytes(kName, k, v);
    else if (k == "p2p_step")
      o.p2p_step = options::integer(kName, k, v, 2, 1024);
    else if (k == "host_min")
      o.host_min = options::bytes(kName, k, v);
    else if (k == "host_max")
      o.host_max = options::bytes(kName, k, v);
    else if (k == "host_step")
      o.host_step = options::integer(kName, k, v, 2, 1024);
    else if (k == "nccl_min")
      o.nccl_min = options::bytes(kName, k, v);
    else if (k == "nccl_max")
      o.nccl_max = options::bytes(kName, k, v);
    else if (k == "nccl_step")
      o.nccl_step = options::integer(kName, k, v, 2, 1024);
    else if (k == "chase_footprint")
      o.chase_footprint = options::bytes(kName, k, v);
    else if (k == "chase_sms")
      o.chase_sms = options::integer(kName, k, v, 0, 1024);
    else if (k == "round_trips")
      o.round_trips = uint32_t(options::integer(kName, k, v, 1, 1000000));
    else if (k == "timeout")
      o.timeout_s = options::integer(kName, k, v, 1, 3600);
    else
      options::unknown_key(kName, k, links_option_specs());
  }
  if (o.quick) {
    if (!kv.count("repeats")) o.repeats = 3;
    if (!kv.count("p2p_step")) o.p2p_step = 32;
    if (!kv.count("p2p_min")) o.p2p_min = 1ull << 20;
    if (!kv.count("host_min")) o.host_min = o.host_max;
    if (!kv.count("nccl_step")) o.nccl_step = 4;
    if (!kv.count("nccl_min")) o.nccl_min = 1ull << 10;
    if (!kv.count("chase_sms")) o.chase_sms = 0;
  }
  for (auto [lo, hi, name] :
       {std::tuple{o.p2p_min, o.p2p_max, "p2p"}, std::tuple{o.host_min, o.host_max, "host"},
        std::tuple{o.nccl_min, o.nccl_max, "nccl"}})
    if (lo == 0 || hi < lo)
      throw std::invalid_argument(std::string("option links.") + name + "_max is below links." +
                                  name + "_min (or the minimum is 0)");
  if (o.chase_footprint < 2 * o.chase_stride)
    throw std::invalid_argument("option links.chase_footprint: at least 512 bytes");
  return o;
}

void run_links(Device& dev, const LinksOptions& opt, Progress& progress,
               const std::atomic<bool>& stop, LinksProbeResult& out) {
  const auto t0 = Clock::now();
  out.status = {};
  LinksKernels* k = dev.kernels<LinksKernels>();
  if (!k) {
    const Status no{StatusCode::unsupported,
                    "the " + dev.info().backend +
                        " backend has no links kernels (peer transfers, host "
                        "links and NCCL are measured through CUDA)"};
    out.status = out.p2p = out.host.status = out.nccl.status = no;
    progress.note("links: " + no.reason);
    out.wall_seconds = seconds_since(t0);
    return;
  }
  Ctx c{*k, opt, progress, stop, out, 0, {}};
  out.gpus = k->gpu_count();
  out.topology = k->topology();
  derive_limits(out.topology);
  p2p_part(c);
  if (!stop) host_part(c);
  if (!stop) nccl_part(c);
  k->release();
  out.wall_seconds = seconds_since(t0);
  if (stop) {
    out.status = {StatusCode::interrupted, "stopped by the user; what was measured is kept"};
    return;
  }
  if (c.errors) {
    out.status = {
        StatusCode::error,
        c.first_error +
            (c.errors > 1 ? " (and " + std::to_string(c.errors - 1) + " more points failed)" : "")};
    throw ProbeError("links: " + out.status.reason);
  }
}

}  // namespace gd
