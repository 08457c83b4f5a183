//===- Status.h - Errors of the dependency-free runtime ---------*- C++ -*-===//
//
// The GPU runtime (CudaRuntime) and the GPU kit's host drivers build with a
// C++17 compiler and nothing else: no LLVM. Their errors are these two small
// types, shaped like llvm::Error and llvm::Expected so that the compiler side
// converts them in one call (`if (Status s = f())` is true on failure).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNTIME_STATUS_H
#define FP8_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace mlir::fp8::runtime {

/// Success, or the message of a failure.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  static Status error(std::string message) {
    Status status;
    status.failure = std::move(message);
    return status;
  }

  /// True on failure, as llvm::Error.
  explicit operator bool() const { return failure.has_value(); }
  const std::string &message() const {
    assert(failure && "no message: the call succeeded");
    return *failure;
  }
  /// `context`: message, for a failure that needs to say where it was.
  Status withContext(const std::string &context) && {
    if (failure)
      failure = context + ": " + *failure;
    return std::move(*this);
  }

private:
  std::optional<std::string> failure;
};

/// A value, or the Status of the failure that left none.
template <typename T>
class [[nodiscard]] Result {
public:
  Result(T value) : value(std::move(value)) {}
  Result(Status status) : status(std::move(status)) {
    assert(this->status && "a Result built from a Status must be a failure");
  }

  /// True when there is a value, as llvm::Expected.
  explicit operator bool() const { return value.has_value(); }
  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  const T *operator->() const { return &*value; }
  Status takeStatus() { return std::move(status); }

private:
  std::optional<T> value;
  Status status;
};

} // namespace mlir::fp8::runtime

#endif // FP8_RUNTIME_STATUS_H
