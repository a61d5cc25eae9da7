// Reading a call's arguments from N-API with clear JavaScript errors. The first problem throws
// (TypeError for a wrong type, RangeError for a wrong value or length) and marks the call failed;
// later getters then return empty values without throwing again, so an entry point reads all its
// arguments and checks ok() once.
#pragma once

#include <node_api.h>

#include <cstdint>
#include <string>

#include "kernels.h"

namespace autoui {

template <typename T>
struct Array {
  T* data = nullptr;
  size_t length = 0;
  explicit operator bool() const { return data != nullptr; }
};

class Args {
 public:
  // `signature` (e.g. "rmsNorm(x, w, y, eps)") names the entry point in every message, after
  // `module` (the addon's name).
  Args(napi_env env, napi_callback_info info, size_t count, const char* signature, const char* module = "autoui_blas");

  bool ok() const { return ok_; }
  size_t count() const { return count_; }

  // A Float32Array; with `optional`, null or undefined gives an empty Array.
  Array<float> Floats(size_t i, const char* name, bool optional = false);
  Array<int32_t> Ints(size_t i, const char* name, bool optional = false);
  Array<uint8_t> Bytes(size_t i, const char* name);
  Array<uint16_t> Shorts(size_t i, const char* name);
  Array<int8_t> SignedBytes(size_t i, const char* name);
  // An Int32Array or Float32Array of 0/1 values, or null/undefined (absent); its length in *length.
  Mask MaskArg(size_t i, const char* name, size_t* length);
  // An integer in [0, 2^31).
  int64_t Int(size_t i, const char* name);
  int32_t SignedInt(size_t i, const char* name);
  uint32_t Seed(size_t i, const char* name);
  double Number(size_t i, const char* name);
  bool Bool(size_t i, const char* name);

  // Throws RangeError("<signature>: <message>") unless `condition`; returns it.
  bool Require(bool condition, const std::string& message);

 private:
  bool IsNullish(size_t i);
  // The typed array at i if it has `type`; else fails with "<name> must be <what>".
  template <typename T>
  Array<T> TypedArg(size_t i, const char* name, bool optional, napi_typedarray_type type, const char* what);
  void Fail(bool range, const std::string& message);

  napi_env env_;
  napi_value argv_[32];
  size_t count_ = 0;
  std::string signature_;
  bool ok_ = true;
};

}  // namespace autoui
