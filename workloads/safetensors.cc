#include "workloads/safetensors.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::workloads {
namespace {

// A header larger than this is not a dataset's: refuse rather than parse.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

// The file's dtype names and the FlashInfer-Trace names they hold, with
// the bits per element.
struct DtypeInfo {
  const char* file_name;
  const char* trace_name;
  int bits;
};
constexpr DtypeInfo kDtypes[] = {
    {"F32", "float32", 32},         {"F16", "float16", 16},         {"BF16", "bfloat16", 16},
    {"F8_E4M3", "float8_e4m3fn", 8}, {"F8_E5M2", "float8_e5m2", 8}, {"F4", "float4_e2m1", 4},
    {"I64", "int64", 64},           {"I32", "int32", 32},           {"I16", "int16", 16},
    {"I8", "int8", 8},              {"BOOL", "bool", 8},            {"F64", "", 64},
    {"U8", "", 8},                  {"U16", "", 16},                {"U32", "", 32},
    {"U64", "", 64}};

const DtypeInfo* FindDtype(absl::string_view file_name) {
  for (const DtypeInfo& d : kDtypes) {
    if (file_name == d.file_name) return &d;
  }
  return nullptr;
}

// The header's length: the first 8 bytes, little endian (bytes.size() >= 8).
uint64_t HeaderSize(absl::string_view bytes) {
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<uint8_t>(bytes[i]);
  return size;
}

absl::Status Bad(absl::string_view origin, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": not a valid safetensors file: ", what));
}

// A header of `header_size` bytes must fit in a file of `file_size` bytes,
// after the 8 bytes of its length.
absl::Status CheckHeaderSize(uint64_t header_size, uint64_t file_size, absl::string_view origin) {
  if (file_size < 8) return Bad(origin, "shorter than its 8-byte header length");
  if (header_size > kMaxHeaderBytes || header_size > file_size - 8) {
    return Bad(origin, absl::StrCat("header of ", header_size, " bytes in a file of ", file_size));
  }
  return absl::OkStatus();
}

// The entries of a header (its JSON text) followed by `data_size` bytes of
// data. The header is read as strict JSON (common/json_reader.h), so its
// problems are named by their path: $.<tensor>.data_offsets.
absl::StatusOr<std::vector<SafetensorsEntry>> ParseHeader(absl::string_view text,
                                                          uint64_t data_size,
                                                          absl::string_view origin) {
  PTXB_ASSIGN_OR_RETURN(const StrictJson header, ParseStrictJson(text, origin));
  const JsonReader r(origin);
  if (!header.is_object()) {
    return r.Error("", header, "a safetensors header (an object of tensor name -> entry)");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<SafetensorsEntry> out;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") continue;
    const std::string at = JsonField("", key);
    PTXB_RETURN_IF_ERROR(r.RequireObject(value, at));
    SafetensorsEntry e;
    e.key = key;
    PTXB_ASSIGN_OR_RETURN(const StrictJson* dtype, r.Required(value, at, "dtype"));
    PTXB_ASSIGN_OR_RETURN(e.dtype, r.String(*dtype, JsonField(at, "dtype"), /*allow_empty=*/true));
    const DtypeInfo* info = FindDtype(e.dtype);
    if (info == nullptr) {
      std::vector<std::string> known;
      for (const DtypeInfo& d : kDtypes) known.push_back(d.file_name);
      return r.Error(JsonField(at, "dtype"), *dtype,
                     absl::StrCat("a safetensors dtype (", absl::StrJoin(known, ", "), ")"));
    }
    const std::string shape_at = JsonField(at, "shape");
    PTXB_ASSIGN_OR_RETURN(const StrictJson* shape, r.Required(value, at, "shape"));
    if (!shape->is_array()) return r.Error(shape_at, *shape, "a list of dimensions");
    unsigned __int128 elements = 1;
    for (size_t i = 0; i < shape->size(); ++i) {
      PTXB_ASSIGN_OR_RETURN(const int64_t dim,
                            r.Integer((*shape)[i], JsonIndex(shape_at, i), 0, kMax));
      e.shape.push_back(dim);
      elements *= static_cast<uint64_t>(dim);
      if (elements > (static_cast<unsigned __int128>(1) << 62)) {
        return r.Error(shape_at, *shape, "at most 2^62 elements");
      }
    }
    const std::string offsets_at = JsonField(at, "data_offsets");
    PTXB_ASSIGN_OR_RETURN(const StrictJson* offsets, r.Required(value, at, "data_offsets"));
    if (!offsets->is_array() || offsets->size() != 2) {
      return r.Error(offsets_at, *offsets, "two offsets [begin, end]");
    }
    PTXB_ASSIGN_OR_RETURN(const int64_t begin,
                          r.Integer((*offsets)[0], JsonIndex(offsets_at, 0), 0, kMax));
    PTXB_ASSIGN_OR_RETURN(const int64_t end,
                          r.Integer((*offsets)[1], JsonIndex(offsets_at, 1), 0, kMax));
    e.begin = static_cast<uint64_t>(begin);
    e.end = static_cast<uint64_t>(end);
    if (e.begin > e.end || e.end > data_size) {
      return r.Error(offsets_at, *offsets,
                     absl::StrCat("offsets [begin, end] within the ", data_size, " bytes of data"));
    }
    const unsigned __int128 expected = (elements * info->bits + 7) / 8;
    if (expected != e.end - e.begin) {
      return r.Error(offsets_at, *offsets,
                     absl::StrCat("offsets ", static_cast<uint64_t>(expected),
                                  " bytes apart (the shape and dtype)"));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Tensor `key` of the file at `path`, checked to be of the FlashInfer-Trace
// `dtype` and exactly `dims`.
absl::StatusOr<SafetensorsEntry> FindTensor(const std::vector<SafetensorsEntry>& entries,
                                            const std::string& path, const std::string& key,
                                            const std::string& dtype,
                                            const std::vector<int64_t>& dims) {
  for (const SafetensorsEntry& e : entries) {
    if (e.key != key) continue;
    const DtypeInfo* info = FindDtype(e.dtype);
    if (dtype != info->trace_name) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", key, "\" is ", e.dtype,
                                                     ", the definition declares ", dtype));
    }
    if (e.shape != dims) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor \"", key, "\" has shape [", absl::StrJoin(e.shape, ", "),
          "], the workload needs [", absl::StrJoin(dims, ", "), "]"));
    }
    return e;
  }
  std::vector<std::string> keys;
  for (const SafetensorsEntry& e : entries) keys.push_back(e.key);
  return absl::NotFoundError(absl::StrCat(path, ": no tensor \"", key, "\" (it has: ",
                                          absl::StrJoin(keys, ", "), ")"));
}

absl::Status CannotRead(const std::string& path) {
  return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
}

}  // namespace

absl::StatusOr<std::vector<SafetensorsEntry>> ParseSafetensorsHeader(absl::string_view bytes,
                                                                     absl::string_view origin) {
  const uint64_t header_size = bytes.size() < 8 ? 0 : HeaderSize(bytes);
  PTXB_RETURN_IF_ERROR(CheckHeaderSize(header_size, bytes.size(), origin));
  return ParseHeader(bytes.substr(8, header_size), bytes.size() - 8 - header_size, origin);
}

absl::StatusOr<std::string> LoadSafetensorsTensor(const std::string& path, const std::string& key,
                                                  const std::string& dtype,
                                                  const std::vector<int64_t>& dims) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return CannotRead(path);
  PTXB_ASSIGN_OR_RETURN(std::vector<SafetensorsEntry> entries,
                        ParseSafetensorsHeader(*bytes, path));
  PTXB_ASSIGN_OR_RETURN(const SafetensorsEntry e, FindTensor(entries, path, key, dtype, dims));
  return bytes->substr(8 + HeaderSize(*bytes) + e.begin, e.end - e.begin);
}

absl::Status CheckSafetensorsTensor(const std::string& path, const std::string& key,
                                    const std::string& dtype, const std::vector<int64_t>& dims) {
  // Only the length and the header are read: the data may be gigabytes.
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (!file || ec) return CannotRead(path);
  std::string length(8, '\0');
  file.read(length.data(), 8);
  const uint64_t header_size = file.gcount() < 8 ? 0 : HeaderSize(length);
  PTXB_RETURN_IF_ERROR(CheckHeaderSize(header_size, file_size, path));
  std::string header(header_size, '\0');
  if (!file.read(header.data(), static_cast<std::streamsize>(header_size))) return CannotRead(path);
  PTXB_ASSIGN_OR_RETURN(std::vector<SafetensorsEntry> entries,
                        ParseHeader(header, file_size - 8 - header_size, path));
  return FindTensor(entries, path, key, dtype, dims).status();
}

}  // namespace ptxbench::workloads
