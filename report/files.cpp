// Output files: the early writability check, plain text files and the atomic JSON write.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

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

}  // namespace

void ensure_writable(const fs::path& file) {
  if (file.empty()) cannot_write(file, "empty path");
  make_parent(file);
  std::error_code ec;
  const bool existed = fs::exists(file, ec);
  // Append mode never truncates a file that is already there.
  errno = 0;
  std::FILE* f = std::fopen(file.c_str(), "a");
  if (!f) cannot_write(file, std::strerror(errno ? errno : EACCES));
  std::fclose(f);
  if (!existed) fs::remove(file, ec);
}

void write_text(const fs::path& file, const std::string& text) {
  make_parent(file);
  errno = 0;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) cannot_write(file, std::strerror(errno ? errno : EACCES));
  out << text;
  out.close();
  if (!out) cannot_write(file, std::strerror(errno ? errno : EIO));
}

void write_json(const fs::path& file, const RunResult& r, const ProbeRegistry& registry) {
  make_parent(file);
  fs::path tmp = file;
  tmp += ".tmp";
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) cannot_write(tmp, std::strerror(errno ? errno : EACCES));
    out << to_json(r, registry).dump(2) << '\n';
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      cannot_write(tmp, std::strerror(errno ? errno : EIO));
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(tmp, ignore);
    cannot_write(file, ec.message());
  }
}

}  // namespace gd::report
