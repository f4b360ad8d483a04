// DLDataType comparisons and printing (global namespace, as in TVM-FFI),
// so kernels can write `x.dtype() == DLDataType{kDLBfloat, 16, 1}` and
// TVM_FFI_ICHECK_EQ(a.dtype(), b.dtype()). Written for ptxbench.
#ifndef TVM_FFI_DTYPE_H_
#define TVM_FFI_DTYPE_H_

#include <dlpack/dlpack.h>

#include <ostream>
#include <string>

inline bool operator==(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(const DLDataType& a, const DLDataType& b) { return !(a == b); }

namespace tvm {
namespace ffi {

// "float32", "bfloat16", "int64", "bool", "float8_e4m3fn", ...: bits are
// written for the basic codes only, "x<lanes>" when lanes > 1.
inline std::string DLDataTypeToString(DLDataType t) {
  static const char* const kNames[] = {
      "int",           "uint",           "float",         "handle",
      "bfloat",        "complex",        "bool",          "float8_e3m4",
      "float8_e4m3",   "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
      "float8_e5m2",   "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn",
      "float6_e3m2fn", "float4_e2m1fn"};
  std::string s = t.code < sizeof(kNames) / sizeof(kNames[0]) ? kNames[t.code]
                                                                : "custom" + std::to_string(t.code);
  if (t.code < 7 && !(t.code == kDLBool && t.bits == 8)) s += std::to_string(t.bits);
  if (t.lanes > 1) s += "x" + std::to_string(t.lanes);
  return s;
}

inline bool DTypeIsFloat(DLDataType t) {
  return t.code == kDLFloat || t.code == kDLBfloat || (t.code >= kDLFloat8_e3m4 && t.code <= kDLFloat4_e2m1fn);
}
inline bool DTypeIsInt(DLDataType t) { return t.code == kDLInt || t.code == kDLUInt; }
inline bool DTypeIsBool(DLDataType t) { return t.code == kDLBool; }

}  // namespace ffi
}  // namespace tvm

inline std::ostream& operator<<(std::ostream& os, DLDataType t) {
  return os << ::tvm::ffi::DLDataTypeToString(t);
}

#endif  // TVM_FFI_DTYPE_H_
