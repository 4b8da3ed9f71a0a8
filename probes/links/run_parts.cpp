// The links probe's host-link and NCCL parts.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"
#include "links/run.hpp"
#include "links/run_internal.hpp"

namespace gd::links_run {

// shape: the host sizes for each GPU and for all at once, planned, timed and checked the same way
void host_part(Ctx& c) {
  HostLinks& h = c.out.host;
  if (!c.opt.parts.count("host")) {
    h.status = {StatusCode::skipped, "not asked for (links.parts)"};
    return;
  }
  // One GPU: "every GPU at once" is that GPU alone, which the bandwidth probe's host-link
  // figures already are; measured here only when asked for, so that the default run on a
  // one-GPU machine spends no time and no GiB of pinned memory on it twice.
  if (c.out.gpus < 2 && !c.opt.parts_given) {
    h.status = {StatusCode::skipped,
                "one GPU: its host link is the bandwidth probe's bandwidth.host.* "
                "(--option links.parts=host measures it here)"};
    return;
  }
  h.status = {};
  const auto sizes = links_sizes(c.opt.host_min, c.opt.host_max, c.opt.host_step);
  const std::vector<HostLinkDir> dirs = {HostLinkDir::h2d, HostLinkDir::d2h, HostLinkDir::both};
  const int configs = c.out.gpus > 1 ? c.out.gpus + 1 : 1;
  const int total = int(dirs.size() * sizes.size()) * configs;
  int n = 0;
  for (HostLinkDir d : dirs)
    for (int who = -1; who < c.out.gpus; ++who) {
      if (who == -1 && c.out.gpus < 1) continue;
      if (who >= 0 && c.out.gpus == 1) continue;  // one GPU: "all" is that GPU alone
      HostCopyRequest r;
      if (who < 0)
        for (int g = 0; g < c.out.gpus; ++g) r.gpus.push_back(g);
      else
        r.gpus = {who};
      r.dir = d;
      r.repeats = c.opt.repeats;
      r.timeout_s = c.opt.timeout_s * 2;
      const std::string key = who < 0 ? to_string(d) : std::to_string(who) + "." + to_string(d);
      BandwidthCurve& curve = who < 0 ? h.all[key] : h.single[key];
      curve.x_unit = "transfer_bytes";
      curve.timed_instruction = "cudaMemcpyAsync (pinned)";
      const auto t0 = Clock::now();
      for (uint64_t bytes : sizes) {
        c.progress.step(kName, std::string("host ") + (who < 0 ? "all " : "GPU ") + key, ++n, total,
                        format_bytes(double(bytes)));
        if (c.stop) {
          curve.status = {StatusCode::interrupted, "stopped by the user"};
          break;
        }
        r.bytes = bytes;
        r.iterations = links_iterations(bytes, c.opt.target_bytes, c.opt.max_iterations);
        BandwidthPoint pt;
        pt.x = double(bytes);
        try {
          const HostCopyTiming t = c.k.host_copy(r);
          const uint64_t total_bytes = t.bytes_per_gpu_per_repeat * r.gpus.size();
          pt.read_bytes = total_bytes;
          std::vector<double> gbps;
          for (double s : t.wall_seconds)
            if (s > 0) gbps.push_back(double(total_bytes) / s / 1e9);
          if (!t.check_error.empty()) {
            pt.status = {StatusCode::error, "check failed: " + t.check_error};
          } else if (gbps.empty()) {
            pt.status = {StatusCode::error, "no timed repeat"};
          } else {
            pt.gbps = summarize(gbps);
            pt.seconds = summarize(t.wall_seconds);
          }
        } catch (const AllocationFailed& e) {
          pt.status = {StatusCode::skipped, e.what()};
        } catch (const BackendError& e) {
          pt.status = {StatusCode::error, e.what()};
        }
        if (pt.status.code == StatusCode::error) {
          c.error("host " + key + " at " + format_bytes(double(bytes)), pt.status.reason);
          if (curve.status.ok()) curve.status = {StatusCode::error, pt.status.reason};
        }
        curve.points.push_back(pt);
      }
      curve.wall_seconds = seconds_since(t0);
      if (c.stop) return;
    }
}

// shape: each collective's sizes planned, timed and checked the same way
void nccl_part(Ctx& c) {
  NcclResult& nr = c.out.nccl;
  if (!c.opt.parts.count("nccl")) {
    nr.status = {StatusCode::skipped, "not asked for (links.parts)"};
    return;
  }
  if (c.out.gpus < 2) {
    nr.status = {StatusCode::unsupported, "needs 2 GPUs"};
    return;
  }
  const Support s = c.k.nccl_open();
  nr.library = c.k.nccl_description();
  if (!s.ok) {
    nr.status = {StatusCode::unsupported, s.reason};
    return;
  }
  nr.status = {};
  nr.ranks = c.out.gpus;
  nr.environment["NCCL_NVLS_ENABLE"] = "0";
  const auto sizes = links_sizes(c.opt.nccl_min, c.opt.nccl_max, c.opt.nccl_step);
  const int total = int(sizes.size() * all_collectives().size());
  int n = 0;
  for (Collective op : all_collectives()) {
    CollectiveCurve& curve = nr.collectives[to_string(op)];
    bool checked_one = false;
    for (uint64_t bytes : sizes) {
      c.progress.step(kName, "nccl " + to_string(op), ++n, total, format_bytes(double(bytes)));
      if (c.stop) {
        curve.status = {StatusCode::interrupted, "stopped by the user"};
        break;
      }
      CollectivePoint pt;
      pt.bytes = bytes;
      const auto counts = collective_counts(op, bytes, nr.ranks);
      if (!counts) {
        pt.status = {StatusCode::skipped, "fewer than one float32 per rank"};
        curve.points.push_back(pt);
        continue;
      }
      pt.bytes = counts->bytes;
      pt.count = counts->send_count;
      CollectiveRequest r;
      r.op = op;
      r.bytes = counts->bytes;
      // A timed repeat of about 4 GiB moved or 10 operations, at most 200.
      r.iterations = std::clamp<int>(int((4ull << 30) / std::max<uint64_t>(r.bytes, 1)), 10, 200);
      r.repeats = c.opt.quick ? 3 : std::max(3, c.opt.repeats);
      r.check = true;  // the backend samples every rank's output against the expected values
      r.timeout_s = c.opt.timeout_s * 3;
      try {
        const CollectiveTiming t = c.k.collective(r);
        if (!t.check_error.empty()) {
          pt.status = {StatusCode::error, "check failed: " + t.check_error};
        } else if (t.seconds_per_op.empty()) {
          pt.status = {StatusCode::error, "no timed repeat"};
        } else {
          pt.checked = t.checked;
          checked_one = checked_one || t.checked;
          std::vector<double> us, alg, bus;
          for (double s : t.seconds_per_op) {
            us.push_back(s * 1e6);
            alg.push_back(double(pt.bytes) / s / 1e9);
            bus.push_back(alg.back() * bus_factor(op, nr.ranks));
          }
          pt.time_us = summarize(us);
          pt.algbw_gbps = summarize(alg);
          pt.busbw_gbps = summarize(bus);
        }
      } catch (const AllocationFailed& e) {
        pt.status = {StatusCode::skipped, e.what()};
      } catch (const BackendError& e) {
        pt.status = {StatusCode::error, e.what()};
      }
      if (pt.status.code == StatusCode::error) {
        c.error("nccl " + to_string(op) + " at " + format_bytes(double(bytes)), pt.status.reason);
        if (curve.status.ok()) curve.status = {StatusCode::error, pt.status.reason};
      }
      curve.points.push_back(pt);
    }
    if (curve.status.ok() && !checked_one)
      curve.status = {StatusCode::error, "no size's result was checked"};
    if (c.stop) return;
  }
}

}  // namespace gd::links_run
