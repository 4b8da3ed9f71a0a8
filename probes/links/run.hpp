// The links probe: every GPU of the node against every other (copy engines and SM kernels
// over peer memory, read, write and both ways, against transfer size; a pointer chase and a
// flag ping-pong across the link), every GPU to and from the host at once and alone, and
// NCCL's collectives over all the GPUs, each beside the limit the link topology implies.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/progress.hpp"
#include "links/links.hpp"

namespace gd {

struct LinksOptions {
  bool quick = false;  // fewer sizes and repeats
  int repeats = 5;
  uint64_t p2p_min = 4ull << 10, p2p_max = 1ull << 30;
  int p2p_step = 2;  // factor between sizes
  uint64_t host_min = 4ull << 10, host_max = 1ull << 30;
  int host_step = 4;
  uint64_t nccl_min = 8, nccl_max = 1ull << 30;
  int nccl_step = 2;
  uint64_t chase_footprint = 2ull << 20;  // the peer's chain (fits its L2)
  // Reading SMs the chase is repeated from, spread over the GPU and capped at its count: by
  // default every SM, whose mean is nvbandwidth's latency figure (0: none; none with quick).
  int chase_sms = 1024;
  uint64_t chase_stride = 256;
  uint32_t round_trips = 1000;  // ping-pong, per repeat
  double timeout_s = 10;        // one operation's wait before it is an error
  // Bytes one timed repeat aims to move (iterations = target / size, 1 .. max_iterations).
  uint64_t target_bytes = 256ull << 20;
  int max_iterations = 1000;
  std::set<std::string> parts = {"p2p", "latency", "host", "nccl"};
  bool parts_given = false;  // links.parts set by the user (one GPU: host only when asked)
};

LinksOptions parse_links_options(const std::map<std::string, std::string>& kv);
std::vector<OptionSpec> links_option_specs();

// Sizes lo, lo x step, ... up to hi (hi itself always last when lo <= hi).
std::vector<uint64_t> links_sizes(uint64_t lo, uint64_t hi, int step);
// Iterations of one timed repeat for a transfer of `bytes`: target / bytes, 1 .. max.
int links_iterations(uint64_t bytes, uint64_t target_bytes, int max_iterations);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`. A
// failed check or a timeout marks its point an error and the probe goes on; at the end the
// probe's status is error and ProbeError is thrown (exit 1) if any point failed.
void run_links(Device& dev, const LinksOptions& opt, Progress& progress,
               const std::atomic<bool>& stop, LinksProbeResult& out);

}  // namespace gd
