// One GPU through several backends (CUDA, OpenCL, Vulkan): which figures agree, which differ
// beyond a tolerance with the code each backend timed beside them, which only one backend
// measured; and the parity table (per probe: ok figures of each backend, the ids they share
// with the first, and how many of those agree). GPU-free and writer-free: the terminal,
// Markdown, CSV and JSON forms are report/compare_report_backends.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"

namespace gd {

// How two results were found to be of one GPU: the same UUID, else the same device name
// (case and surrounding blanks aside); none: neither.
enum class GpuMatch { uuid, name, none };
std::string to_string(GpuMatch m);  // "uuid", "name", "none"

// A result's device UUID as 32 lower-case hex digits, however its backend spelled it (CUDA:
// "GPU-7203...-...", Vulkan and OpenCL with cl_khr_device_uuid: the 32 digits); "" for a
// reference, a backend that gives none or anything that is not 16 bytes of hex.
std::string device_uuid(const CompareInput& in);
GpuMatch same_gpu(const CompareInput& a, const CompareInput& b);

// Whether `compare A B` compares backends on its own: two results (not references) of one
// GPU (same_gpu) whose backends are known and differ.
bool cross_backend_inputs(const CompareInput& a, const CompareInput& b);

// The probe a figure id belongs to: its first dot-separated part ("compute").
std::string probe_of(const std::string& id);

// The code a backend timed for a figure, one entry a line: the compute loop's opcodes with
// their counts ("FFMA x512", "BRA x1") where the machine code was read, else the instruction
// the probe recorded (SASS or ISA opcode, SPIR-V op, API call; a listing of several lines
// split at its line breaks); empty where the backend gave none.
std::vector<std::string> instruction_listing(const CompareInput& in, const Figure& f);

enum class BackendVerdict {
  within,          // ok in both, |b / a - 1| <= tolerance
  differs,         // ok in both, beyond the tolerance
  not_comparable,  // ok in both, but in units that do not convert (or no number)
  only_first,      // ok in the first run only
  only_second,     // ok in the second run only
};
std::string to_string(BackendVerdict v);  // "within", "differs", ... as above

// One figure id ok in at least one of the two runs.
struct BackendItem {
  std::string id, label, unit;  // the unit of the values: the first run's where it is ok
  BackendVerdict verdict = BackendVerdict::within;
  std::optional<double> a, b;   // medians; b converted to the first run's unit
  std::optional<double> ratio;  // b / a (absent where a is 0 or either is absent)
  // Each run's status ("absent" where it lacks the id) and reason, for the one-sided ones.
  Status status_a, status_b;
  std::string note;  // why not comparable; for a difference inside the step, that step
  std::vector<std::string> listing_a, listing_b;
  // differs, but by no more than the step the first run's figure states (Figure::resolution:
  // a capacity between two sweep points, a rate a timer step or the spread between target
  // placements can move): the two cannot be told apart by the first run's own measurement.
  // Only the first run's step counts, as in a baseline gate.
  bool inside_step = false;
};

struct CrossBackendReport {
  CompareInput a, b;
  GpuMatch match = GpuMatch::none;
  double tolerance = 0.05;
  // In the first run's figure order, then the ids only the second run has ok.
  std::vector<BackendItem> items;
  int count(BackendVerdict v) const;
  int common() const;       // ok in both (within + differs + not comparable)
  int inside_step() const;  // of those that differ, how many lie inside [1]'s step
};

// The figures of `b` against those of `a` (a is what ratios are to). Statuses other than ok
// (unstable included) count as not ok: only measured, stable figures are compared.
CrossBackendReport compare_backends(const CompareInput& a, const CompareInput& b, double tolerance);

// ---- parity table ----

struct ParityCell {
  int ok = 0;  // ids with status ok
  // Of the first input's ok ids, how many this input also has ok, how many of those agree
  // within the tolerance, and how many others differ by no more than the first input's
  // stated step (BackendItem::inside_step); absent for the first input itself.
  std::optional<int> common, agree, inside_step;
};

struct ParityRow {
  std::string probe;              // "all" for the totals
  std::vector<ParityCell> cells;  // one per input
};

struct ParityTable {
  std::vector<CompareInput> inputs;  // [1], [2] ... in the order given
  double tolerance = 0.05;
  std::vector<ParityRow> rows;  // probes in first-seen order over the inputs
  ParityRow total;
  // Inputs of another GPU than the first (same_gpu none): "[3] NVIDIA H200 is not the GPU of
  // [1] (...)".
  std::vector<std::string> notes;
};

// Two or more results; the first is what the others are measured against.
ParityTable backend_parity(std::vector<CompareInput> inputs, double tolerance);

}  // namespace gd
