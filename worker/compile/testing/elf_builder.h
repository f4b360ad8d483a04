#ifndef PTXBENCH_WORKER_COMPILE_TESTING_ELF_BUILDER_H_
#define PTXBENCH_WORKER_COMPILE_TESTING_ELF_BUILDER_H_

// Small sound ELF64 files and fatbins made in memory, for the tests of the
// module scan (gpu_image_scan.h): a cubin with named kernel sections and a
// symbol table, and fatbins that carry one, plain or compressed.

#include <elf.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ptxbench::worker::testing {

struct Section {
  std::string name;
  uint32_t type = SHT_PROGBITS;
  uint64_t flags = 0;
  std::string data;
  uint32_t link = 0;     // index of a section, 1-based as in the file
  uint64_t entsize = 0;
};

// A little-endian ELF64 header of `machine` whose `shnum` section headers
// start at `shoff`.
inline Elf64_Ehdr ElfHeader(uint16_t machine, uint64_t shoff, uint16_t shnum, uint16_t shstrndx) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shoff = shoff;
  eh.e_shnum = shnum;
  eh.e_shstrndx = shstrndx;
  return eh;
}

// An ELF64 of `machine` (EM_CUDA: a cubin) with `sections` after the null
// section and a section name table at the end.
inline std::string MakeElf(std::vector<Section> sections, uint16_t machine = EM_CUDA) {
  std::string shstrtab(1, '\0');
  std::vector<uint32_t> names;
  for (const Section& s : sections) {
    names.push_back(shstrtab.size());
    shstrtab += s.name + '\0';
  }
  names.push_back(shstrtab.size());
  shstrtab += std::string(".shstrtab") + '\0';
  sections.push_back({".shstrtab", SHT_STRTAB, 0, shstrtab});
  std::string out(sizeof(Elf64_Ehdr), '\0');
  std::vector<Elf64_Shdr> headers(1);
  for (size_t i = 0; i < sections.size(); ++i) {
    Elf64_Shdr h{};
    h.sh_name = names[i];
    h.sh_type = sections[i].type;
    h.sh_flags = sections[i].flags;
    h.sh_offset = out.size();
    h.sh_size = sections[i].data.size();
    h.sh_link = sections[i].link;
    h.sh_entsize = sections[i].entsize;
    out += sections[i].data;
    headers.push_back(h);
  }
  while (out.size() % 8 != 0) out.push_back('\0');
  const Elf64_Ehdr eh = ElfHeader(machine, out.size(), headers.size(), headers.size() - 1);
  out.append(reinterpret_cast<const char*>(headers.data()), headers.size() * sizeof(Elf64_Shdr));
  std::memcpy(out.data(), &eh, sizeof(eh));
  return out;
}

// A cubin whose one kernel `name` has `code` as its .text section, named in
// its symbol table as nvcc names it.
inline std::string MakeCubin(const std::string& name, const std::string& code) {
  std::string strtab = std::string(1, '\0') + name + '\0';
  Elf64_Sym syms[2]{};
  syms[1].st_name = 1;
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  syms[1].st_shndx = 1;
  syms[1].st_size = code.size();
  return MakeElf({{".text." + name, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, code},
                  {".strtab", SHT_STRTAB, 0, strtab},
                  {".symtab", SHT_SYMTAB, 0,
                   std::string(reinterpret_cast<const char*>(syms), sizeof(syms)), 2,
                   sizeof(Elf64_Sym)}});
}

enum class Packing { kPlain, kZstd, kLz4 };

// An LZ4 block of literals only (a valid block any decoder reads).
inline std::string Lz4Literals(const std::string& data) {
  std::string out;
  size_t n = data.size();
  out.push_back(static_cast<char>(n >= 15 ? 0xf0 : n << 4));
  if (n >= 15) {
    for (n -= 15; n >= 255; n -= 255) out.push_back(static_cast<char>(255));
    out.push_back(static_cast<char>(n));
  }
  return out + data;
}

// An LZ4 block that codes each run of 8 or more equal bytes as a match (so
// the data is not laid out in place, as nvcc's is not).
inline std::string Lz4Compress(const std::string& data) {
  std::string out;
  size_t literal_start = 0, i = 1;
  auto length_bytes = [&](size_t n) {
    for (n -= 15; n >= 255; n -= 255) out.push_back(static_cast<char>(255));
    out.push_back(static_cast<char>(n));
  };
  while (i < data.size()) {
    size_t run = 0;
    while (i + run < data.size() && data[i + run] == data[i - 1]) ++run;
    if (run < 8) {
      ++i;
      continue;
    }
    const size_t literals = i - literal_start, match = run - 4;
    out.push_back(static_cast<char>(((literals >= 15 ? 15 : literals) << 4) |
                                    (match >= 15 ? 15 : match)));
    if (literals >= 15) length_bytes(literals);
    out.append(data, literal_start, literals);
    out.push_back('\x01');
    out.push_back('\0');
    if (match >= 15) length_bytes(match);
    i += run;
    literal_start = i;
    ++i;
  }
  return out + Lz4Literals(data.substr(literal_start));
}

// A fatbin of one entry of `kind` (1 PTX, 2 cubin) holding `payload`.
inline std::string MakeFatbin(const std::string& payload, Packing packing, uint16_t kind = 2) {
  std::string body = payload;
  uint64_t flags = 0x11;
  if (packing == Packing::kZstd) {
    body.resize(ZSTD_compressBound(payload.size()));
    body.resize(ZSTD_compress(body.data(), body.size(), payload.data(), payload.size(), 3));
    flags |= 0x8000;
  } else if (packing == Packing::kLz4) {
    body = Lz4Compress(payload);
    flags |= 0x2000;
  }
  const uint32_t compressed = packing == Packing::kPlain ? 0 : body.size();
  while (body.size() % 8 != 0) body.push_back('\0');
  std::string entry(64, '\0');
  auto put = [&](size_t at, auto v) { std::memcpy(entry.data() + at, &v, sizeof(v)); };
  put(0, kind);
  put(2, uint16_t{0x0101});
  put(4, uint32_t{64});
  put(8, uint64_t{body.size()});
  put(16, compressed);
  put(28, uint32_t{90});
  put(40, flags);
  put(56, uint64_t{packing == Packing::kPlain ? 0 : payload.size()});
  std::string out(16, '\0');
  const uint32_t magic = 0xba55ed50;
  std::memcpy(out.data(), &magic, 4);
  const uint16_t version = 1, header = 16;
  std::memcpy(out.data() + 4, &version, 2);
  std::memcpy(out.data() + 6, &header, 2);
  const uint64_t size = entry.size() + body.size();
  std::memcpy(out.data() + 8, &size, 8);
  return out + entry + body;
}

// A host module (x86-64) with nothing in it, to carry things after it.
inline std::string MakeHostModule() {
  return MakeElf({{".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(64, '\x90')}},
                 EM_X86_64);
}

}  // namespace ptxbench::worker::testing

#endif  // PTXBENCH_WORKER_COMPILE_TESTING_ELF_BUILDER_H_
