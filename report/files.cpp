// Output files: the early writability check, and the one write helper every writer uses
// (output.hpp): temporary file beside the target, checked writes, rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "output.hpp"
#include "report.hpp"

namespace gd::report {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannot_write(const fs::path& p, const std::string& why) {
  throw std::runtime_error("cannot write " + p.string() + ": " + why);
}

void make_parent(const fs::path& file) {
  const fs::path parent = file.parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) cannot_write(file, ec.message());
  if (!fs::is_directory(parent, ec)) cannot_write(file, std::strerror(ENOTDIR));
}

// Where the content goes: the target, or the file a symbolic link names (the link stays).
fs::path resolve_target(const fs::path& file) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(file, ec)) && fs::exists(fs::status(file, ec))) {
    const fs::path real = fs::canonical(file, ec);
    if (!ec) return real;
  }
  return file;
}

// A new, empty file beside `target` (O_EXCL: never one that is already there), open for
// writing; its path in *tmp.
int open_temp_beside(const fs::path& target, fs::path* tmp) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = target.filename().string().substr(0, 160);
  for (int attempt = 0;; ++attempt) {
    *tmp = dir / ("." + name + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) +
                  ".tmp");
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST || attempt > 100) return fd;
  }
}

}  // namespace

void check_output_target(const fs::path& file) {
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);  // follows links: what would be written
  if (!fs::exists(st) || fs::is_regular_file(st)) return;
  const char* what = fs::is_directory(st)        ? "a folder"
                     : fs::is_character_file(st) ? "a character device"
                     : fs::is_block_file(st)     ? "a block device"
                     : fs::is_fifo(st)           ? "a FIFO"
                     : fs::is_socket(st)         ? "a socket"
                                                 : "not a regular file";
  throw RefusedOutput("refusing to write " + file.string() + ": it exists and is " + what +
                      " (outputs replace regular files only)");
}

void ensure_writable(const fs::path& file) {
  if (file.empty()) cannot_write(file, "empty path");
  check_output_target(file);
  make_parent(file);
  // Outputs are written beside the target and renamed: the folder must take a new file.
  fs::path tmp;
  errno = 0;
  const int fd = open_temp_beside(resolve_target(file), &tmp);
  if (fd < 0) cannot_write(file, std::strerror(errno ? errno : EACCES));
  ::close(fd);
  std::error_code ec;
  fs::remove(tmp, ec);
}

void write_file(const fs::path& file, const std::string& content) {
  if (file.empty()) cannot_write(file, "empty path");
  check_output_target(file);
  make_parent(file);
  const fs::path target = resolve_target(file);
  fs::path tmp;
  errno = 0;
  const int fd = open_temp_beside(target, &tmp);
  if (fd < 0) cannot_write(file, std::strerror(errno ? errno : EACCES));
  auto fail = [&](int err) {
    std::error_code ec;
    fs::remove(tmp, ec);
    cannot_write(file, std::strerror(err ? err : EIO));
  };
  // A file that is replaced keeps its permissions.
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode))
    (void)::fchmod(fd, old.st_mode & 07777);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail(err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail(errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) fail(errno);
}

void write_text(const fs::path& file, const std::string& text) { write_file(file, text); }

void write_json(const fs::path& file, const RunResult& r, const ProbeRegistry& registry) {
  write_file(file, to_json(r, registry).dump(2) + '\n');
}

}  // namespace gd::report
