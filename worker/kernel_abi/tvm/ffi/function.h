// TVM_FFI_DLL_EXPORT_TYPED_FUNC(Name, Function): exports `Function` under the
// C symbol __tvm_ffi_<Name> with TVM-FFI's safe-call signature, converting
// the packed arguments to the function's parameter types the way TVM-FFI's
// public specification describes (written for ptxbench):
//   TensorView / DLTensor*   a DLTensor pointer (7) or a Tensor object (70)
//   Optional<TensorView>     also None (0)
//   integers, bool           an int (1) or a bool (2)
//   float, double            a float (3), an int or a bool
//   DLDataType, DLDevice     5, 6;  void*  an opaque pointer (4) or None
// A wrong count or type, or any exception the function throws, makes the
// call return -1 with the error kept for the caller (RaisedError()); the
// macro works inside a namespace and with a qualified or parenthesized
// function name or a lambda.
#ifndef TVM_FFI_FUNCTION_H_
#define TVM_FFI_FUNCTION_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/optional.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tvm {
namespace ffi {
namespace details {

// The last error of an exported call on this thread: "<kind>: <message>".
inline std::string& RaisedError() {
  static thread_local std::string error;
  return error;
}

template <typename F>
struct FunctionInfo : FunctionInfo<decltype(&F::operator())> {};  // lambdas, functors
template <typename R, typename... Args>
struct FunctionInfo<R(Args...)> {
  using Return = R;
  using ArgTuple = std::tuple<std::decay_t<Args>...>;
  static constexpr size_t kArity = sizeof...(Args);
};
template <typename R, typename... Args>
struct FunctionInfo<R (*)(Args...)> : FunctionInfo<R(Args...)> {};
template <typename R, typename... Args>
struct FunctionInfo<R (&)(Args...)> : FunctionInfo<R(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...) const> : FunctionInfo<R(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionInfo<R (C::*)(Args...)> : FunctionInfo<R(Args...)> {};

inline const char* TypeName(int32_t index) {
  switch (index) {
    case kTVMFFINone: return "None";
    case kTVMFFIInt: return "int";
    case kTVMFFIBool: return "bool";
    case kTVMFFIFloat: return "float";
    case kTVMFFIOpaquePtr: return "void*";
    case kTVMFFIDataType: return "DataType";
    case kTVMFFIDevice: return "Device";
    case kTVMFFIDLTensorPtr: return "DLTensor*";
    case kTVMFFITensor: return "Tensor";
    default: return "an unsupported type";
  }
}

[[noreturn]] inline void WrongType(const char* name, size_t i, const char* expected,
                                   const TVMFFIAny& arg) {
  throw ::tvm::ffi::Error("TypeError", std::string("Mismatched type on argument #") +
                                           std::to_string(i) + " when calling `" + name +
                                           "`: expected " + expected + " but got " +
                                           TypeName(arg.type_index));
}

inline const DLTensor* TensorOf(const TVMFFIAny& arg) {
  if (arg.type_index == kTVMFFIDLTensorPtr) return static_cast<const DLTensor*>(arg.v_ptr);
  if (arg.type_index == kTVMFFITensor) {
    return reinterpret_cast<const DLTensor*>(reinterpret_cast<const char*>(arg.v_obj) +
                                             sizeof(TVMFFIObject));
  }
  return nullptr;
}

template <typename T, typename = void>
struct ArgConverter {
  static_assert(sizeof(T) == 0,
                "ptxbench's TVM-FFI support takes TensorView, Optional<TensorView>, DLTensor*, "
                "integer, bool, float, double, DLDataType, DLDevice and void* parameters");
};

template <>
struct ArgConverter<TensorView> {
  static TensorView Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (const DLTensor* t = TensorOf(arg)) return TensorView(t);
    WrongType(name, i, "a tensor", arg);
  }
};

template <>
struct ArgConverter<DLTensor*> {
  static DLTensor* Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (const DLTensor* t = TensorOf(arg)) return const_cast<DLTensor*>(t);
    WrongType(name, i, "a tensor", arg);
  }
};

template <>
struct ArgConverter<Optional<TensorView>> {
  static Optional<TensorView> Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFINone) return Optional<TensorView>();
    return ArgConverter<TensorView>::Convert(name, i, arg);
  }
};

template <>
struct ArgConverter<bool> {
  static bool Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIInt || arg.type_index == kTVMFFIBool) return arg.v_int64 != 0;
    WrongType(name, i, "bool", arg);
  }
};

template <typename T>
struct ArgConverter<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static T Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIInt || arg.type_index == kTVMFFIBool) {
      return static_cast<T>(arg.v_int64);
    }
    WrongType(name, i, "int", arg);
  }
};

template <typename T>
struct ArgConverter<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIFloat) return static_cast<T>(arg.v_float64);
    if (arg.type_index == kTVMFFIInt || arg.type_index == kTVMFFIBool) {
      return static_cast<T>(arg.v_int64);
    }
    WrongType(name, i, "float", arg);
  }
};

template <>
struct ArgConverter<DLDataType> {
  static DLDataType Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIDataType) return arg.v_dtype;
    WrongType(name, i, "DataType", arg);
  }
};

template <>
struct ArgConverter<DLDevice> {
  static DLDevice Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIDevice) return arg.v_device;
    WrongType(name, i, "Device", arg);
  }
};

template <>
struct ArgConverter<void*> {
  static void* Convert(const char* name, size_t i, const TVMFFIAny& arg) {
    if (arg.type_index == kTVMFFIOpaquePtr) return arg.v_ptr;
    if (arg.type_index == kTVMFFINone) return nullptr;
    WrongType(name, i, "void*", arg);
  }
};

template <typename R>
void StoreResult(TVMFFIAny* result, R value) {
  if constexpr (std::is_same_v<R, bool>) {
    result->type_index = kTVMFFIBool;
    result->v_int64 = value ? 1 : 0;
  } else if constexpr (std::is_integral_v<R>) {
    result->type_index = kTVMFFIInt;
    result->v_int64 = static_cast<int64_t>(value);
  } else if constexpr (std::is_floating_point_v<R>) {
    result->type_index = kTVMFFIFloat;
    result->v_float64 = static_cast<double>(value);
  } else {
    static_assert(sizeof(R) == 0, "an exported function returns void, an integer, bool or a float");
  }
}

template <typename Info, typename F, size_t... I>
void Invoke(const char* name, F&& f, const TVMFFIAny* args, TVMFFIAny* result,
            std::index_sequence<I...>) {
  using Args = typename Info::ArgTuple;
  if constexpr (std::is_void_v<typename Info::Return>) {
    f(ArgConverter<std::tuple_element_t<I, Args>>::Convert(name, I, args[I])...);
  } else {
    StoreResult(result, f(ArgConverter<std::tuple_element_t<I, Args>>::Convert(name, I, args[I])...));
  }
}

template <typename F>
int SafeCall(const char* name, F&& f, const TVMFFIAny* args, int32_t num_args,
             TVMFFIAny* result) {
  using Info = FunctionInfo<std::remove_cv_t<std::remove_reference_t<F>>>;
  try {
    if (num_args != static_cast<int32_t>(Info::kArity)) {
      TVM_FFI_THROW(TypeError) << "Mismatched number of arguments when calling `" << name
                               << "`: it takes " << Info::kArity << " but got " << num_args
                               << " (the definition's inputs, then its outputs)";
    }
    Invoke<Info>(name, std::forward<F>(f), args, result, std::make_index_sequence<Info::kArity>());
    return 0;
  } catch (const ::tvm::ffi::Error& e) {
    RaisedError() = e.kind() + ": " + e.message();
  } catch (const std::exception& e) {
    RaisedError() = std::string("InternalError: ") + e.what();
  } catch (...) {
    RaisedError() = "InternalError: an exception that is not a std::exception";
  }
  return -1;
}

}  // namespace details
}  // namespace ffi
}  // namespace tvm

#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                 \
  extern "C" __attribute__((visibility("default"))) int __tvm_ffi_##ExportName(           \
      void* tvm_ffi_self_, const TVMFFIAny* tvm_ffi_args_, int32_t tvm_ffi_num_args_,      \
      TVMFFIAny* tvm_ffi_result_) {                                                         \
    (void)tvm_ffi_self_;                                                                    \
    return ::tvm::ffi::details::SafeCall(#ExportName, Function, tvm_ffi_args_,              \
                                         tvm_ffi_num_args_, tvm_ffi_result_);               \
  }

#define TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(ExportName, DocString)

#endif  // TVM_FFI_FUNCTION_H_
