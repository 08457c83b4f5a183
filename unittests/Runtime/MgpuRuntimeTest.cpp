//===- MgpuRuntimeTest.cpp - libfp8_gpu_runtime.so over the fake driver ---===//
//
// MLIR's GPU runtime ABI as compiled programs call it, through dlopen,
// over FakeCudaDriver.cpp (FP8_CUDA_DRIVER): what kind of memory a pointer
// is, waiting for a stream once the runtime is in error, the dynamic
// shared memory limit of a function whose handle a reloaded module reuses,
// and the caller's current context. The runtime is the process's: these
// tests share it, and leave it out of error.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace {
/// The runtime library and the fake driver it loads, opened once.
struct Libraries {
  void *runtime = nullptr, *driver = nullptr;

  Libraries() {
    setenv("FP8_CUDA_DRIVER", FP8_FAKE_CUDA_DRIVER, 1);
    runtime = dlopen(FP8_GPU_RUNTIME_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    // The same handle the runtime gets when it loads the driver.
    driver = dlopen(FP8_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
  }
  static Libraries &get() {
    static Libraries libraries;
    return libraries;
  }
};

template <typename Fn> Fn *runtimeFunction(const char *name) {
  return reinterpret_cast<Fn *>(dlsym(Libraries::get().runtime, name));
}
template <typename Fn> Fn *driverFunction(const char *name) {
  return reinterpret_cast<Fn *>(dlsym(Libraries::get().driver, name));
}

long driverCalls(const char *call) {
  return driverFunction<long(const char *)>("fakeCudaCount")(call);
}

/// The runtime's error, cleared.
std::string takeError() {
  const char *error = runtimeFunction<const char *()>("fp8GpuRuntimeError")();
  std::string message = error ? error : "";
  runtimeFunction<void()>("fp8GpuRuntimeClearError")();
  return message;
}

void *currentContext() {
  void *context = nullptr;
  driverFunction<int(void **)>("cuCtxGetCurrent")(&context);
  return context;
}

/// One kernel with one pointer parameter.
constexpr const char *kPtx = ".version 8.0\n.target sm_90a\n"
                             ".address_size 64\n"
                             ".visible .entry kernel(.param .u64 p)\n"
                             "{\n  ret;\n}\n";

class MgpuRuntime : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(Libraries::get().runtime, nullptr) << dlerror();
    ASSERT_NE(Libraries::get().driver, nullptr) << dlerror();
    takeError();
  }
  void TearDown() override { EXPECT_EQ(takeError(), ""); }

  void *loadModule() {
    return runtimeFunction<void *(void *, int)>("mgpuModuleLoadJIT")(
        const_cast<char *>(kPtx), 2);
  }
  void *getFunction(void *module) {
    return runtimeFunction<void *(void *, const char *)>(
        "mgpuModuleGetFunction")(module, "kernel");
  }
  void unloadModule(void *module) {
    runtimeFunction<void(void *)>("mgpuModuleUnload")(module);
  }
  void launch(void *function, int32_t sharedBytes) {
    void *pointer = nullptr;
    void *params[] = {&pointer};
    runtimeFunction<void(void *, intptr_t, intptr_t, intptr_t, intptr_t,
                         intptr_t, intptr_t, int32_t, void *, void **,
                         void **, size_t)>("mgpuLaunchKernel")(
        function, 1, 1, 1, 128, 1, 1, sharedBytes, nullptr, params, nullptr,
        1);
  }
};
} // namespace

TEST_F(MgpuRuntime, TellsHostManagedAndDeviceMemoryApart) {
  auto kind = runtimeFunction<int32_t(void *)>("fp8GpuMemoryKind");
  auto allocManaged =
      runtimeFunction<void *(size_t)>("_mlir_memref_to_llvm_alloc");
  auto freeManaged = runtimeFunction<void(void *)>("fp8GpuFree");
  auto alloc = runtimeFunction<void *(uint64_t, void *, bool)>("mgpuMemAlloc");
  auto free = runtimeFunction<void(void *, void *)>("mgpuMemFree");
  int onStack = 0;
  void *host = std::malloc(64);
  void *managed = allocManaged(64);
  void *device = alloc(64, nullptr, /*hostShared=*/false);
  ASSERT_NE(managed, nullptr);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(kind(&onStack), 0);
  EXPECT_EQ(kind(host), 0);
  EXPECT_EQ(kind(managed), 1);
  EXPECT_EQ(kind(static_cast<char *>(managed) + 32), 1);
  EXPECT_EQ(kind(device), 2);
  EXPECT_EQ(kind(static_cast<char *>(device) + 32), 2);
  EXPECT_FALSE(runtimeFunction<bool(void *)>("fp8GpuIsManagedMemory")(device));
  EXPECT_TRUE(runtimeFunction<bool(void *)>("fp8GpuIsManagedMemory")(managed));
  free(device, nullptr);
  freeManaged(managed);
  std::free(host);
}

TEST_F(MgpuRuntime, SynchronizeWaitsEvenInError) {
  void *stream = runtimeFunction<void *()>("mgpuStreamCreate")();
  ASSERT_NE(stream, nullptr) << takeError();
  // In error: a launch of no kernel (what a module that failed to load
  // leaves); kernels queued before it may still run.
  launch(nullptr, 0);
  ASSERT_NE(runtimeFunction<const char *()>("fp8GpuRuntimeError")(), nullptr);
  long before = driverCalls("cuStreamSynchronize");
  runtimeFunction<void(void *)>("mgpuStreamSynchronize")(stream);
  EXPECT_EQ(driverCalls("cuStreamSynchronize"), before + 1);
  void *event = runtimeFunction<void *()>("mgpuEventCreate")();
  EXPECT_EQ(event, nullptr); // nothing new is made in error
  runtimeFunction<void(void *)>("mgpuStreamDestroy")(stream);
  EXPECT_NE(takeError().find("mgpuLaunchKernel: no kernel"),
            std::string::npos);
}

TEST_F(MgpuRuntime, ReloadedFunctionGetsItsSharedMemoryLimitAgain) {
  void *module = loadModule();
  ASSERT_NE(module, nullptr) << takeError();
  void *function = getFunction(module);
  ASSERT_NE(function, nullptr) << takeError();
  long before = driverCalls("cuFuncSetAttribute");
  launch(function, 200 * 1024);
  launch(function, 200 * 1024);
  ASSERT_EQ(takeError(), "");
  EXPECT_EQ(driverCalls("cuFuncSetAttribute"), before + 1);
  unloadModule(module);

  // The fake driver gives the next module's function the unloaded one's
  // handle, as a driver may: its limit is the default again.
  void *reloaded = loadModule();
  ASSERT_NE(reloaded, nullptr) << takeError();
  void *again = getFunction(reloaded);
  ASSERT_EQ(again, function);
  launch(again, 200 * 1024);
  EXPECT_EQ(takeError(), "");
  EXPECT_EQ(driverCalls("cuFuncSetAttribute"), before + 2);
  unloadModule(reloaded);
}

TEST_F(MgpuRuntime, CallersContextStaysCurrent) {
  auto push = driverFunction<int(void *)>("cuCtxPushCurrent_v2");
  auto pop = driverFunction<int(void **)>("cuCtxPopCurrent_v2");
  static int callersContext;
  ASSERT_EQ(push(&callersContext), 0);
  void *stream = runtimeFunction<void *()>("mgpuStreamCreate")();
  EXPECT_EQ(currentContext(), &callersContext);
  void *module = loadModule();
  EXPECT_EQ(currentContext(), &callersContext);
  launch(getFunction(module), 0);
  EXPECT_EQ(currentContext(), &callersContext);
  void *buffer = runtimeFunction<void *(uint64_t, void *, bool)>(
      "mgpuMemAlloc")(64, stream, false);
  EXPECT_NE(buffer, nullptr);
  runtimeFunction<void(void *, void *)>("mgpuMemFree")(buffer, stream);
  runtimeFunction<void(void *)>("mgpuStreamSynchronize")(stream);
  runtimeFunction<void(void *)>("mgpuStreamDestroy")(stream);
  unloadModule(module);
  EXPECT_EQ(currentContext(), &callersContext);
  void *popped = nullptr;
  ASSERT_EQ(pop(&popped), 0);
  EXPECT_EQ(popped, &callersContext);
  // With no context current, none is after a call either.
  EXPECT_EQ(currentContext(), nullptr);
  runtimeFunction<int32_t()>("fp8GpuMultiprocessorCount")();
  EXPECT_EQ(currentContext(), nullptr);
}
