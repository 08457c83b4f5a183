# Initial cache for the ASan+UBSan build (scripts/sanitize.sh):
#   cmake -C cmake/caches/sanitize.cmake ...
# clang-22 for the project, linked against Debian's uninstrumented libMLIR.so
# and libLLVM.so. -fno-sanitize=vptr: those libraries carry no UBSan type
# info for their classes. -fno-sanitize-recover=all: any UBSan report stops
# the process, so it fails the lit test that ran it. -O1 -g1 without NDEBUG:
# fast enough for the whole suite, line tables in reports, and the project's
# assertions on. FP8_BUILD_FUZZER adds tools/fp8-fuzz and coverage.
set(CMAKE_C_COMPILER clang-22 CACHE STRING "")
set(CMAKE_CXX_COMPILER clang++-22 CACHE STRING "")
set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "")
set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O1 -g1" CACHE STRING "")
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1" CACHE STRING "")
set(FP8_SANITIZER_FLAGS
  -fsanitize=address,undefined
  -fno-sanitize=vptr
  -fno-sanitize-recover=all
  -fno-omit-frame-pointer
  CACHE STRING "")
set(FP8_BUILD_FUZZER ON CACHE BOOL "")
