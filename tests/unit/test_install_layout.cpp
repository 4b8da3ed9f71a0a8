// Where an installed gpudissect finds its reference database (cmake/install.cmake puts it in
// <prefix>/share/gpudissect/reference beside <prefix>/bin/gpudissect).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gpudissect/compare.hpp"

namespace fs = std::filesystem;
using namespace gd;

namespace {

// A scratch tree: <root>/usr/bin, <root>/usr/share/gpudissect/reference and <root>/data/
// reference, the folder /usr/bin/../../data/reference names on a real system.
struct Tree {
  fs::path root = fs::temp_directory_path() / ("gd-install-" + std::to_string(::getpid()));
  Tree() {
    fs::remove_all(root);
    fs::create_directories(root / "usr" / "bin");
    fs::create_directories(root / "usr" / "share" / "gpudissect" / "reference");
    fs::create_directories(root / "data" / "reference");
    ::unsetenv("GD_REFERENCE_DIR");
  }
  ~Tree() { fs::remove_all(root); }
  fs::path exe() const { return root / "usr" / "bin" / "gpudissect"; }
};

}  // namespace

TEST(InstallLayout, InstalledBinaryReadsShareBeforeAStrayDataFolder) {
  Tree t;
  const auto found = find_reference_dir(t.exe(), "/nonexistent/source/data/reference");
  ASSERT_TRUE(found);
  EXPECT_EQ(fs::canonical(*found),
            fs::canonical(t.root / "usr" / "share" / "gpudissect" / "reference"));
}

TEST(InstallLayout, InstalledBinaryReadsShareBeforeTheSourceTree) {
  Tree t;
  fs::remove_all(t.root / "data");
  const fs::path source = t.root / "src" / "data" / "reference";
  fs::create_directories(source);
  const auto found = find_reference_dir(t.exe(), source);
  ASSERT_TRUE(found);
  EXPECT_EQ(fs::canonical(*found),
            fs::canonical(t.root / "usr" / "share" / "gpudissect" / "reference"));
}

TEST(InstallLayout, BuildTreeBinaryStillReadsTheSources) {
  Tree t;
  fs::remove_all(t.root / "usr" / "share");
  // <root>/usr/bin/../../data/reference: a build folder two levels inside the source tree.
  const auto found = find_reference_dir(t.exe());
  ASSERT_TRUE(found);
  EXPECT_EQ(fs::canonical(*found), fs::canonical(t.root / "data" / "reference"));
}

TEST(InstallLayout, EnvironmentOverridesTheInstalledFolder) {
  Tree t;
  ::setenv("GD_REFERENCE_DIR", "/somewhere/else", 1);
  const auto found = find_reference_dir(t.exe());
  ::unsetenv("GD_REFERENCE_DIR");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, fs::path("/somewhere/else"));
}
