#include "napi_args.h"

#include <cmath>

namespace autoui {

Args::Args(napi_env env, napi_callback_info info, size_t count, const char* signature, const char* module)
    : env_(env), signature_(std::string(module) + "." + signature) {
  size_t argc = sizeof(argv_) / sizeof(argv_[0]);
  if (count > argc || napi_get_cb_info(env, info, &argc, argv_, nullptr, nullptr) != napi_ok) {
    Fail(false, "could not read the arguments");
    return;
  }
  count_ = count;
  if (argc != count) Fail(false, "expected " + std::to_string(count) + " arguments, got " + std::to_string(argc));
}

void Args::Fail(bool range, const std::string& message) {
  if (!ok_) return;
  ok_ = false;
  bool pending = false;
  napi_is_exception_pending(env_, &pending);
  if (pending) return;
  const std::string msg = signature_ + ": " + message;
  if (range) {
    napi_throw_range_error(env_, nullptr, msg.c_str());
  } else {
    napi_throw_type_error(env_, nullptr, msg.c_str());
  }
}

bool Args::Require(bool condition, const std::string& message) {
  if (!condition) Fail(true, message);
  return condition;
}

bool Args::IsNullish(size_t i) {
  napi_valuetype t;
  return napi_typeof(env_, argv_[i], &t) == napi_ok && (t == napi_null || t == napi_undefined);
}

namespace {

bool Typed(napi_env env, napi_value v, napi_typedarray_type* type, void** data, size_t* length) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return false;
  return napi_get_typedarray_info(env, v, type, length, data, nullptr, nullptr) == napi_ok;
}

}  // namespace

template <typename T>
Array<T> Args::TypedArg(size_t i, const char* name, bool optional, napi_typedarray_type type, const char* what) {
  Array<T> out;
  if (!ok_ || (optional && IsNullish(i))) return out;
  napi_typedarray_type got;
  void* data = nullptr;
  size_t length = 0;
  if (!Typed(env_, argv_[i], &got, &data, &length) || got != type) {
    Fail(false, std::string(name) + " must be " + what + (optional ? " or null" : ""));
    return out;
  }
  out.data = static_cast<T*>(data);
  out.length = length;
  // A zero-length view may have a null data pointer; keep "present" distinct from "absent".
  if (!out.data) out.data = reinterpret_cast<T*>(alignof(T));
  return out;
}

Array<float> Args::Floats(size_t i, const char* name, bool optional) {
  return TypedArg<float>(i, name, optional, napi_float32_array, "a Float32Array");
}

Array<int32_t> Args::Ints(size_t i, const char* name, bool optional) {
  return TypedArg<int32_t>(i, name, optional, napi_int32_array, "an Int32Array");
}

Array<uint8_t> Args::Bytes(size_t i, const char* name) { return TypedArg<uint8_t>(i, name, false, napi_uint8_array, "a Uint8Array"); }

Array<uint16_t> Args::Shorts(size_t i, const char* name) { return TypedArg<uint16_t>(i, name, false, napi_uint16_array, "a Uint16Array"); }

Array<int8_t> Args::SignedBytes(size_t i, const char* name) { return TypedArg<int8_t>(i, name, false, napi_int8_array, "an Int8Array"); }

Mask Args::MaskArg(size_t i, const char* name, size_t* length) {
  Mask mask;
  *length = 0;
  if (!ok_ || IsNullish(i)) return mask;
  napi_typedarray_type type;
  void* data = nullptr;
  if (!Typed(env_, argv_[i], &type, &data, length) || (type != napi_int32_array && type != napi_float32_array)) {
    Fail(false, std::string(name) + " must be an Int32Array, a Float32Array or null");
    return mask;
  }
  if (type == napi_int32_array) {
    mask.i32 = data ? static_cast<const int32_t*>(data) : reinterpret_cast<const int32_t*>(alignof(int32_t));
  } else {
    mask.f32 = data ? static_cast<const float*>(data) : reinterpret_cast<const float*>(alignof(float));
  }
  return mask;
}

double Args::Number(size_t i, const char* name) {
  double v = 0;
  if (!ok_) return v;
  napi_valuetype t;
  if (napi_typeof(env_, argv_[i], &t) != napi_ok || t != napi_number || napi_get_value_double(env_, argv_[i], &v) != napi_ok) {
    Fail(false, std::string(name) + " must be a number");
  }
  return v;
}

int64_t Args::Int(size_t i, const char* name) {
  const double v = Number(i, name);
  if (ok_ && !(v >= 0 && v <= 2147483647.0 && std::floor(v) == v)) Fail(true, std::string(name) + " must be an integer in [0, 2^31)");
  return ok_ ? static_cast<int64_t>(v) : 0;
}

int32_t Args::SignedInt(size_t i, const char* name) {
  const double v = Number(i, name);
  if (ok_ && !(v >= -2147483648.0 && v <= 2147483647.0 && std::floor(v) == v)) Fail(true, std::string(name) + " must be a 32-bit integer");
  return ok_ ? static_cast<int32_t>(v) : 0;
}

uint32_t Args::Seed(size_t i, const char* name) {
  const double v = Number(i, name);
  if (ok_ && !(v >= 0 && v <= 4294967295.0 && std::floor(v) == v)) Fail(true, std::string(name) + " must be an integer in [0, 2^32)");
  return ok_ ? static_cast<uint32_t>(v) : 0;
}

bool Args::Bool(size_t i, const char* name) {
  bool v = false;
  if (!ok_) return v;
  if (napi_get_value_bool(env_, argv_[i], &v) != napi_ok) Fail(false, std::string(name) + " must be a boolean");
  return v;
}

}  // namespace autoui
