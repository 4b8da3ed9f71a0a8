// NCCL is loaded at run time: where the library named by GD_NCCL_LIBRARY cannot be opened
// (CI has no NCCL), the loader says why with the dlopen error, and NCCL_NVLS_ENABLE=0 is in
// the environment all the same (set before any load is tried). Needs no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "links/cuda_nccl.hpp"

namespace gd::cuda {
namespace {

TEST(NcclLoad, AbsentLibraryIsAReasonNotACrash) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);  // a user's value is overwritten
  setenv("GD_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  std::string why;
  const Nccl* n = nccl_load(&why);
  EXPECT_EQ(n, nullptr);
  EXPECT_NE(why.find("/nonexistent/libnccl.so.2"), std::string::npos) << why;
  EXPECT_NE(why.find("GD_NCCL_LIBRARY"), std::string::npos) << why;
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  ASSERT_NE(nvls, nullptr);
  EXPECT_STREQ(nvls, "0");
  // Loaded once: a second call gives the same answer.
  std::string again;
  EXPECT_EQ(nccl_load(&again), nullptr);
  EXPECT_EQ(again, why);
}

}  // namespace
}  // namespace gd::cuda
