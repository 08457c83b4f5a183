//===- InitAllFP8.h - Register the fp8 dialect and passes -------*- C++ -*-===//
//
// The entry points a downstream compiler calls to use fp8-mlir:
//
//   mlir::DialectRegistry registry;
//   mlir::fp8::registerAllFP8Dialects(registry);
//   mlir::fp8::registerAllFP8Passes();
//
// Both are defined in FP8Pipelines (lib/Pipelines/InitAllFP8.cpp), not
// inline: this header is included by every tool and the dialect and
// conversion headers behind them cost a translation unit 20 s to parse.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_INITALLFP8_H
#define FP8_INITALLFP8_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::fp8 {

/// The fp8 dialect, the dialects of data-parallel programs (DLTI, MPI,
/// shard), and the dialect extensions (interfaces, translations, targets)
/// the fp8 lowerings to the CPU and to NVVM need.
void registerAllFP8Dialects(DialectRegistry &registry);

/// Every fp8 pass and pipeline, for `-pass-pipeline` and command lines.
void registerAllFP8Passes();

} // namespace mlir::fp8

#endif // FP8_INITALLFP8_H
