// Writes target.xml in the exact shape gdbserver 13 prints (rsp-packets.md §7.1): types of a
// feature first, then its registers with explicit regnum attributes.
#include "arch/x86/target_description.hpp"

#include <span>

namespace arch::x86 {

namespace {

struct FlagField {
  std::string_view name;
  int bit;
};

constexpr FlagField kEflagsFields[] = {
    {"CF", 0},  {"", 1},    {"PF", 2},   {"AF", 4},   {"ZF", 6},   {"SF", 7},
    {"TF", 8},  {"IF", 9},  {"DF", 10},  {"OF", 11},  {"NT", 14},  {"RF", 16},
    {"VM", 17}, {"AC", 18}, {"VIF", 19}, {"VIP", 20}, {"ID", 21},
};
constexpr FlagField kMxcsrFields[] = {
    {"IE", 0}, {"DE", 1}, {"ZE", 2},  {"OE", 3},  {"UE", 4},  {"PE", 5},  {"DAZ", 6},
    {"IM", 7}, {"DM", 8}, {"ZM", 9},  {"OM", 10}, {"UM", 11}, {"PM", 12}, {"FZ", 15},
};

struct VectorType {
  std::string_view id;
  std::string_view element;
  int count;
  std::string_view union_field;  // its field name in vec128
};
constexpr VectorType kVec128Parts[] = {
    {"v8bf16", "bfloat16", 8, "v8_bfloat16"}, {"v8h", "ieee_half", 8, "v8_half"},
    {"v4f", "ieee_single", 4, "v4_float"},    {"v2d", "ieee_double", 2, "v2_double"},
    {"v16i8", "int8", 16, "v16_int8"},        {"v8i16", "int16", 8, "v8_int16"},
    {"v4i32", "int32", 4, "v4_int32"},        {"v2i64", "int64", 2, "v2_int64"},
};

void append_flags(std::string& out, std::string_view id, std::span<const FlagField> fields) {
  out += "    <flags id=\"";
  out += id;
  out += "\" size=\"4\">\n";
  for (const FlagField& f : fields) {
    const std::string bit = std::to_string(f.bit);
    out += "      <field name=\"";
    out += f.name;
    out += "\" start=\"" + bit + "\" end=\"" + bit + "\" type=\"bool\"/>\n";
  }
  out += "    </flags>\n";
}

void append_vector(std::string& out, std::string_view id, std::string_view element, int count) {
  out += "    <vector id=\"";
  out += id;
  out += "\" type=\"";
  out += element;
  out += "\" count=\"" + std::to_string(count) + "\"/>\n";
}

void append_vec128(std::string& out) {
  for (const VectorType& v : kVec128Parts) {
    append_vector(out, v.id, v.element, v.count);
  }
  out += "    <union id=\"vec128\">\n";
  for (const VectorType& v : kVec128Parts) {
    out += "      <field name=\"";
    out += v.union_field;
    out += "\" type=\"";
    out += v.id;
    out += "\"/>\n";
  }
  out += "      <field name=\"uint128\" type=\"uint128\"/>\n";
  out += "    </union>\n";
}

void append_types(std::string& out, Feature f, Isa isa) {
  switch (f) {
    case Feature::Core:
      append_flags(out, "i386_eflags", kEflagsFields);
      break;
    case Feature::Sse:
      append_vec128(out);
      append_flags(out, "i386_mxcsr", kMxcsrFields);
      break;
    case Feature::Avx512:
      if (isa == Isa::Amd64) {
        append_vec128(out);  // for xmm16..xmm31
      }
      append_vector(out, "v2ui128", "uint128", 2);
      break;
    case Feature::Linux:
    case Feature::Segments:
    case Feature::Avx:
    case Feature::Pkeys:
      break;
  }
}

void append_reg(std::string& out, const RegisterInfo& r) {
  out += "    <reg name=\"";
  out += r.name;
  out += "\" bitsize=\"" + std::to_string(r.size * 8) + "\" type=\"";
  out += r.type;
  out += "\" regnum=\"" + std::to_string(r.regnum) + "\"";
  if (!r.group.empty()) {
    out += " group=\"";
    out += r.group;
    out += "\"";
  }
  out += "/>\n";
}

}  // namespace

std::string_view feature_name(Feature f) {
  switch (f) {
    case Feature::Core:
      return "org.gnu.gdb.i386.core";
    case Feature::Sse:
      return "org.gnu.gdb.i386.sse";
    case Feature::Linux:
      return "org.gnu.gdb.i386.linux";
    case Feature::Segments:
      return "org.gnu.gdb.i386.segments";
    case Feature::Avx:
      return "org.gnu.gdb.i386.avx";
    case Feature::Avx512:
      return "org.gnu.gdb.i386.avx512";
    case Feature::Pkeys:
      return "org.gnu.gdb.i386.pkeys";
  }
  return "";
}

std::string target_xml(const RegisterLayout& layout) {
  std::string out =
      "<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
      "<target>\n"
      "  <architecture>";
  out += layout.isa() == Isa::Amd64 ? "i386:x86-64" : "i386";
  out += "</architecture>\n"
      "  <osabi>GNU/Linux</osabi>\n";
  const auto regs = layout.registers();
  // The table is grouped by feature in document order: one <feature> per run.
  for (size_t i = 0; i < regs.size();) {
    const Feature f = regs[i].feature;
    out += "  <feature name=\"";
    out += feature_name(f);
    out += "\">\n";
    append_types(out, f, layout.isa());
    for (; i < regs.size() && regs[i].feature == f; ++i) {
      append_reg(out, regs[i]);
    }
    out += "  </feature>\n";
  }
  out += "</target>\n";
  return out;
}

std::string target_xml(uint64_t xcr0, Isa isa) {
  // Offsets do not matter for the document; the reference geometry places every component.
  XsaveGeometry geo = reference_geometry();
  geo.xcr0 = xcr0 & 0x3ffULL;  // x87 .. pkru; AMX and later are not described
  geo.xcr0 |= 0x3;             // x87 and SSE: always there on CPUs that run amd64
  return target_xml(RegisterLayout(geo, isa));
}

}  // namespace arch::x86
