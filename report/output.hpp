// The one way every writer puts a file on disk (JSON, HTML, CSV, PNG): the whole content is
// written to a temporary file beside the target, checked (a full disk is an error, not a
// short file), and renamed over the target, so that a reader never sees half a file and a
// failed write leaves the old file (or none) behind. A target that exists and is not a
// regular file (a device node, a FIFO, a folder) is refused instead of replaced: as root,
// `-o /dev/null` would otherwise turn the device into a plain file.
#pragma once

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gd::report {

// A target refused: it exists and is not a regular file. The command line answers it with
// exit status 2, as bad input.
struct RefusedOutput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws RefusedOutput (naming the path) where `file` exists (following symbolic links)
// and is not a regular file.
void check_output_target(const std::filesystem::path& file);

// Writes `content` to `file` as described above, creating missing parent folders. Throws
// RefusedOutput for a target that is not a regular file, std::runtime_error naming the
// file for any other failure (the temporary file is removed).
void write_file(const std::filesystem::path& file, const std::string& content);

// A file written as a stream: text goes to memory, commit() writes it with write_file.
// Without commit() (an exception on the way) nothing is written.
class OutputFile : public std::ostringstream {
 public:
  explicit OutputFile(std::filesystem::path file)
      : std::ostringstream(std::ios::out | std::ios::binary), file_(std::move(file)) {}
  OutputFile(OutputFile&&) = default;
  const std::filesystem::path& path() const { return file_; }
  void commit() { write_file(file_, str()); }

 private:
  std::filesystem::path file_;
};

}  // namespace gd::report
