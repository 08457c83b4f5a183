//===- CudaRuntimeTest.cpp - CudaRuntime without (or with) a GPU ----------===//
//
// On machines without a driver or a GPU, creating the runtime must fail with
// a message that says so, and never crash. Where a GPU exists, the same
// tests check a real round trip instead.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runtime/CudaRuntime.h"


#include "gtest/gtest.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

using namespace mlir::fp8::runtime;

namespace {

/// Sets an environment variable for one test and restores it after.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
};

TEST(CudaRuntime, MissingDriverIsACleanError) {
  ScopedEnv env("FP8_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  auto runtime = CudaRuntime::create();
  ASSERT_FALSE(static_cast<bool>(runtime));
  std::string message = runtime.takeStatus().message();
  EXPECT_NE(message.find("no CUDA driver"), std::string::npos) << message;
  EXPECT_NE(message.find("/nonexistent/libcuda.so.1"), std::string::npos)
      << message;
}

TEST(CudaRuntime, LibraryWithoutDriverAPIIsACleanError) {
  // Any shared library that is not a CUDA driver: the C library.
  ScopedEnv env("FP8_CUDA_DRIVER", "libc.so.6");
  auto runtime = CudaRuntime::create();
  ASSERT_FALSE(static_cast<bool>(runtime));
  std::string message = runtime.takeStatus().message();
  EXPECT_NE(message.find("no usable CUDA driver"), std::string::npos)
      << message;
}

TEST(CudaRuntime, ToolkitStubDriverReportsNoGPU) {
  // The CUDA toolkit's link stub exports the whole driver API and fails
  // cuInit: the error must carry the driver's own name and text.
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0)
    GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  ScopedEnv env("FP8_CUDA_DRIVER", stub);
  auto runtime = CudaRuntime::create();
  ASSERT_FALSE(static_cast<bool>(runtime));
  std::string message = runtime.takeStatus().message();
  EXPECT_NE(message.find("no GPU"), std::string::npos) << message;
  EXPECT_NE(message.find("cuInit: CUDA_ERROR_"), std::string::npos) << message;
}

TEST(CudaRuntime, DefaultDriverFailsCleanlyOrRoundTrips) {
  auto runtime = CudaRuntime::create();
  if (!runtime) {
    std::string message = runtime.takeStatus().message();
    EXPECT_TRUE(message.find("no CUDA driver") != std::string::npos ||
                message.find("no GPU") != std::string::npos)
        << message;
    return;
  }
  CudaRuntime &cuda = **runtime;
  // Entry points the runtime does not wrap come from the same library.
  EXPECT_NE(cuda.getDriverEntryPoint("cuFuncSetAttribute"), nullptr);
  EXPECT_EQ(cuda.getDriverEntryPoint("fp8NoSuchEntryPoint"), nullptr);
  std::vector<uint32_t> host(1000), back(1000);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint32_t>(i * 2654435761u);
  auto buffer = cuda.allocate(host.size() * 4);
  ASSERT_TRUE(static_cast<bool>(buffer)) << buffer.takeStatus().message();
  auto copy = cuda.allocate(host.size() * 4);
  ASSERT_TRUE(static_cast<bool>(copy)) << copy.takeStatus().message();
  ASSERT_FALSE(static_cast<bool>(
      cuda.copyToDevice(*buffer, host.data(), host.size() * 4)));
  ASSERT_FALSE(
      static_cast<bool>(cuda.copyOnDevice(*copy, *buffer, host.size() * 4)));
  ASSERT_FALSE(
      static_cast<bool>(cuda.copyToHost(back.data(), *copy, host.size() * 4)));
  EXPECT_EQ(host, back);
  // A module that is not PTX fails with the driver's message.
  auto module = cuda.loadModule("not ptx");
  EXPECT_FALSE(static_cast<bool>(module));
  EXPECT_FALSE(module.takeStatus().message().empty());
  EXPECT_FALSE(static_cast<bool>(cuda.free(*buffer)));
  EXPECT_FALSE(static_cast<bool>(cuda.free(*copy)));
}

} // namespace
