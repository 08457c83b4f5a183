//===- MLIRHeaders.cpp - The translation unit that builds the PCH ---------===//
//
// CMake compiles MLIRHeaders.h into a precompiled header for the target that
// owns this file; every other target reuses it (cmake/FP8Build.cmake). The
// object file itself is never linked.
//
//===----------------------------------------------------------------------===//
