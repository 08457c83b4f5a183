//===- CInterface.h - Functions callable from C ------------------*- C++ -*-===//
//
// What a compiled module offers to C and C++ callers: every public function
// through MLIR's C interface (`_mlir_ciface_<name>`, memref descriptors,
// `llvm.emit_c_interface`), accessors of its state (the ml_program globals
// that hold delayed-scaling histories and scales), and a C header that
// declares them. fp8-run's JIT and fp8-compile's libraries share these
// rules, so both call a function the same way.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_AOT_CINTERFACE_H
#define FP8_AOT_CINTERFACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fp8::aot {

/// `text` with every character outside [A-Za-z0-9_] replaced by '_'.
std::string toCIdentifier(StringRef text);

/// Whether `text` is a C identifier.
bool isCIdentifier(StringRef text);

/// Whether `type` can cross the C interface: a ranked tensor (static or
/// dynamic sizes) or a scalar of f32, f64, f16, bf16, the FP8 formats, E8M0,
/// i1/i8/i16/i32/i64 or index. f16 and bf16 scalars are tensors only (see
/// isCScalarType).
bool isCInterfaceType(Type type);

/// Whether a scalar of `type` has a C type that passes it the way LLVM does
/// (f16 and bf16 travel in vector registers; C has no portable type for
/// them, so they cross as rank-0 tensors).
bool isCScalarType(Type type);

/// Makes `func` callable through the C interface: `llvm.emit_c_interface`,
/// argument and result attributes of other dialects dropped (their work is
/// done; the LLVM IR translation would warn about each), and every tensor
/// argument read-only, so that a call never writes into the caller's inputs.
void prepareForCInterface(func::FuncOp func);

/// One accessor pair of a module's state: `get` returns a fresh copy of the
/// global (the caller frees it), `set` overwrites it.
struct StateAccessor {
  std::string global;  ///< ml_program.global symbol
  std::string getName; ///< func.func that returns it
  std::string setName; ///< func.func that writes it
  RankedTensorType type;
};

/// Adds `<prefix>state_get_<name>` and `<prefix>state_set_<name>` for every
/// ml_program.global of static ranked tensor type (name: the symbol with
/// every character outside [A-Za-z0-9_] replaced by '_'). Fails, with an
/// error at the global, when two names collide or a function of that name
/// exists.
LogicalResult addStateAccessors(ModuleOp module, StringRef prefix,
                                SmallVectorImpl<StateAccessor> &accessors);

/// The public functions with a body, checked: each argument and result must
/// satisfy isCInterfaceType / isCScalarType; the error is located at the
/// function and names the argument or result.
FailureOr<SmallVector<func::FuncOp>> getExportedFunctions(ModuleOp module);

/// A library's functions have names that no C library uses,
/// "fp8.fn.<name>"; only their C interface, `_mlir_ciface_<name>`, is
/// exported. Otherwise a graph function @memcpy or @free would receive the
/// calls that the compiled code makes to the C library's (a copy, a
/// deallocation), and could not be hidden from the programs linking an
/// object.
///
/// Before the lowering of a CPU program: every function with a body at the
/// top of `module` becomes "fp8.fn.<name>", so that the lowering's own
/// declarations of the C functions it calls (malloc, free) never meet a
/// graph function of that name. (Not for GPU programs: their kernels are
/// named after the function, and PTX names cannot hold '.'.) Fails, with an
/// error at the symbol, when a new name is taken.
LogicalResult renameFunctionsForLowering(ModuleOp module);

/// After the lowering to the LLVM dialect: the C interface's wrappers of
/// renamed functions, `_mlir_ciface_fp8.fn.<name>`, become
/// `_mlir_ciface_<name>`, and every other function with a body but the C
/// interface becomes "fp8.fn.<name>". Fails, with an error at the function,
/// when a name is taken, or when the lowering had to rename its declaration
/// of an external function (malloc_0) because a graph function holds the
/// name.
LogicalResult renameInternalFunctions(ModuleOp module);

/// A C header (C99 and C++) declaring `_mlir_ciface_<name>` of every
/// exported function, the memref descriptor and result structs they take,
/// and a table of the state accessors. `guard` names the include guard and
/// `prefix` the state table (both C identifiers; `prefix` may be empty);
/// `library` is quoted in its comment. No text of the module reaches the
/// header unchecked: function names are C identifiers (getExportedFunctions),
/// types are spelled by the writer, global names are escaped C strings. `gpu`: the program runs on a GPU
/// (fp8-lower-to-gpu), its buffers are managed memory that the caller frees
/// with fp8GpuFree, and the runtime's error query is declared too.
std::string emitCHeader(ArrayRef<func::FuncOp> functions,
                        ArrayRef<StateAccessor> state, StringRef prefix,
                        StringRef guard, StringRef library, bool gpu = false);

} // namespace mlir::fp8::aot

#endif // FP8_AOT_CINTERFACE_H
