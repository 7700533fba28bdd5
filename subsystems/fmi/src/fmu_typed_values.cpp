#include "fmu_typed_values.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fmu_api.hpp"

namespace cosim::fmi {

namespace {

template <class T>
T to_type(double v) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (!(v == v)) return T{0};
    // Ties away from zero, as every integer input of an FMU (to_int32 in fmu_typed_values.hpp).
    const double r = std::round(v);
    // (double)max may round up to 2^bits: >= catches it before the cast would overflow.
    if (r >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    if (r <= static_cast<double>(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    return static_cast<T>(r);
  }
}

template <class T, class Get>
int get_as(Get* f, void* instance, typed_group& g, double* dst) noexcept {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  auto* p = reinterpret_cast<T*>(g.buf.data());
  const std::size_t n = g.vrs.size();
  int st = 0;
  if constexpr (std::is_same_v<Get, fmi2GetIntegerTYPE>)
    st = static_cast<int>(f(instance, g.vrs.data(), n, p));
  else
    st = static_cast<int>(f(instance, g.vrs.data(), n, p, n));
  if (st <= fmi2Warning)
    for (std::size_t j = 0; j < n; ++j) dst[g.slots[j]] = static_cast<double>(p[j]);
  return st;
}

template <class T, class Set>
int set_as(Set* f, void* instance, typed_group& g, const double* src, bool all) noexcept {
  auto* p = reinterpret_cast<T*>(g.buf.data());
  std::size_t n = 0;
  for (std::size_t j = 0; j < g.vrs.size(); ++j) {
    const double v = src[g.slots[j]];
    if (!all && std::bit_cast<std::uint64_t>(v) == std::bit_cast<std::uint64_t>(g.last[j]))
      continue;
    g.last[j] = v;
    g.send_vrs[n] = g.vrs[j];
    p[n++] = to_type<T>(v);
  }
  if (n == 0) return 0;
  if constexpr (std::is_same_v<Set, fmi2SetIntegerTYPE>)
    return static_cast<int>(f(instance, g.send_vrs.data(), n, p));
  else
    return static_cast<int>(f(instance, g.send_vrs.data(), n, p, n));
}

struct names {
  const char* get;
  const char* set;
};

names names_of(int major, var_type t) noexcept {
  switch (t) {
    case var_type::float32:
      return {"fmi3GetFloat32", "fmi3SetFloat32"};
    case var_type::int8:
      return {"fmi3GetInt8", "fmi3SetInt8"};
    case var_type::uint8:
      return {"fmi3GetUInt8", "fmi3SetUInt8"};
    case var_type::int16:
      return {"fmi3GetInt16", "fmi3SetInt16"};
    case var_type::uint16:
      return {"fmi3GetUInt16", "fmi3SetUInt16"};
    case var_type::uint32:
      return {"fmi3GetUInt32", "fmi3SetUInt32"};
    case var_type::int64:
      return {"fmi3GetInt64", "fmi3SetInt64"};
    case var_type::uint64:
      return {"fmi3GetUInt64", "fmi3SetUInt64"};
    case var_type::enumeration:  // FMI 2.0 Sect. 2.2.7 / FMI 3.0 Sect. 2.4.7.4
      return major == 2 ? names{"fmi2GetInteger", "fmi2SetInteger"}
                        : names{"fmi3GetInt64", "fmi3SetInt64"};
    default:
      return {"?", "?"};
  }
}

}  // namespace

void add_typed(std::vector<typed_group>& groups, var_type type, std::uint32_t vr,
               std::size_t slot) {
  typed_group* g = nullptr;
  for (typed_group& x : groups)
    if (x.type == type) g = &x;
  if (g == nullptr) {
    groups.emplace_back();
    g = &groups.back();
    g->type = type;
  }
  g->vrs.push_back(vr);
  g->slots.push_back(slot);
}

std::string typed_missing(const fmu_subsystem::api& a, int major, var_type type, bool set) {
  bool has_get = false, has_set = false;
  switch (type) {
    case var_type::float32:
      has_get = a.get_float32 != nullptr, has_set = a.set_float32 != nullptr;
      break;
    case var_type::int8:
      has_get = a.get_int8 != nullptr, has_set = a.set_int8 != nullptr;
      break;
    case var_type::uint8:
      has_get = a.get_uint8 != nullptr, has_set = a.set_uint8 != nullptr;
      break;
    case var_type::int16:
      has_get = a.get_int16 != nullptr, has_set = a.set_int16 != nullptr;
      break;
    case var_type::uint16:
      has_get = a.get_uint16 != nullptr, has_set = a.set_uint16 != nullptr;
      break;
    case var_type::uint32:
      has_get = a.get_uint32 != nullptr, has_set = a.set_uint32 != nullptr;
      break;
    case var_type::int64:
      has_get = a.get_int64 != nullptr, has_set = a.set_int64 != nullptr;
      break;
    case var_type::uint64:
      has_get = a.get_uint64 != nullptr, has_set = a.set_uint64 != nullptr;
      break;
    case var_type::enumeration:
      has_get = major == 2 ? a.get_integer2 != nullptr : a.get_int64 != nullptr;
      has_set = major == 2 ? a.set_integer2 != nullptr : a.set_int64 != nullptr;
      break;
    default:
      break;
  }
  const names n = names_of(major, type);
  std::string missing = has_get ? "" : n.get;
  if (set && !has_set) missing += (missing.empty() ? "" : ", ") + std::string(n.set);
  return missing;
}

std::string typed_value_problem(var_type type, int major, double v) {
  if (type == var_type::float32) return "";
  if (v != std::trunc(v)) return "is not an integer";
  double lo = 0.0, hi = 0.0;
  auto range = [&](auto x) {
    using T = decltype(x);
    lo = static_cast<double>(std::numeric_limits<T>::min());
    hi = static_cast<double>(std::numeric_limits<T>::max());
  };
  switch (type) {
    case var_type::int8:
      range(std::int8_t{});
      break;
    case var_type::uint8:
      range(std::uint8_t{});
      break;
    case var_type::int16:
      range(std::int16_t{});
      break;
    case var_type::uint16:
      range(std::uint16_t{});
      break;
    case var_type::uint32:
      range(std::uint32_t{});
      break;
    case var_type::uint64:
      range(std::uint64_t{});
      break;
    case var_type::enumeration:
      if (major == 2) {
        range(std::int32_t{});
        break;
      }
      [[fallthrough]];
    default:
      range(std::int64_t{});
      break;
  }
  // hi of the 64-bit types rounds up to 2^63 / 2^64, which is itself out of range.
  const bool wide = hi >= 9.2e18;
  if (v < lo || v > hi || (wide && v >= hi))
    return std::string("is outside the ") + type_name(type, major) + " range";
  return "";
}

template <int Major>
double typed_as_sent(var_type type, double v) noexcept {
  switch (type) {
    case var_type::float32:
      return static_cast<double>(to_type<fmi3Float32>(v));
    case var_type::int8:
      return static_cast<double>(to_type<fmi3Int8>(v));
    case var_type::uint8:
      return static_cast<double>(to_type<fmi3UInt8>(v));
    case var_type::int16:
      return static_cast<double>(to_type<fmi3Int16>(v));
    case var_type::uint16:
      return static_cast<double>(to_type<fmi3UInt16>(v));
    case var_type::uint32:
      return static_cast<double>(to_type<fmi3UInt32>(v));
    case var_type::int64:
      return static_cast<double>(to_type<fmi3Int64>(v));
    case var_type::uint64:
      return static_cast<double>(to_type<fmi3UInt64>(v));
    case var_type::enumeration:
      if constexpr (Major == 2)
        return static_cast<double>(to_type<fmi2Integer>(v));
      else
        return static_cast<double>(to_type<fmi3Int64>(v));
    default:
      return v;
  }
}

template <int Major>
int typed_get(const fmu_subsystem::api& a, void* instance, typed_group& g, double* dst,
              const char*& call) noexcept {
  call = names_of(Major, g.type).get;
  switch (g.type) {
    case var_type::float32:
      return get_as<fmi3Float32>(a.get_float32, instance, g, dst);
    case var_type::int8:
      return get_as<fmi3Int8>(a.get_int8, instance, g, dst);
    case var_type::uint8:
      return get_as<fmi3UInt8>(a.get_uint8, instance, g, dst);
    case var_type::int16:
      return get_as<fmi3Int16>(a.get_int16, instance, g, dst);
    case var_type::uint16:
      return get_as<fmi3UInt16>(a.get_uint16, instance, g, dst);
    case var_type::uint32:
      return get_as<fmi3UInt32>(a.get_uint32, instance, g, dst);
    case var_type::int64:
      return get_as<fmi3Int64>(a.get_int64, instance, g, dst);
    case var_type::uint64:
      return get_as<fmi3UInt64>(a.get_uint64, instance, g, dst);
    case var_type::enumeration:
      if constexpr (Major == 2)
        return get_as<fmi2Integer>(a.get_integer2, instance, g, dst);
      else
        return get_as<fmi3Int64>(a.get_int64, instance, g, dst);
    default:
      return fmi2Error;
  }
}

template <int Major>
int typed_set(const fmu_subsystem::api& a, void* instance, typed_group& g, const double* src,
              bool all, const char*& call) noexcept {
  call = names_of(Major, g.type).set;
  switch (g.type) {
    case var_type::float32:
      return set_as<fmi3Float32>(a.set_float32, instance, g, src, all);
    case var_type::int8:
      return set_as<fmi3Int8>(a.set_int8, instance, g, src, all);
    case var_type::uint8:
      return set_as<fmi3UInt8>(a.set_uint8, instance, g, src, all);
    case var_type::int16:
      return set_as<fmi3Int16>(a.set_int16, instance, g, src, all);
    case var_type::uint16:
      return set_as<fmi3UInt16>(a.set_uint16, instance, g, src, all);
    case var_type::uint32:
      return set_as<fmi3UInt32>(a.set_uint32, instance, g, src, all);
    case var_type::int64:
      return set_as<fmi3Int64>(a.set_int64, instance, g, src, all);
    case var_type::uint64:
      return set_as<fmi3UInt64>(a.set_uint64, instance, g, src, all);
    case var_type::enumeration:
      if constexpr (Major == 2)
        return set_as<fmi2Integer>(a.set_integer2, instance, g, src, all);
      else
        return set_as<fmi3Int64>(a.set_int64, instance, g, src, all);
    default:
      return fmi2Error;
  }
}

// The two versions, one adapter each (fmi2_instance.cpp, fmi3_instance.cpp).
template double typed_as_sent<2>(var_type, double) noexcept;
template double typed_as_sent<3>(var_type, double) noexcept;
template int typed_get<2>(const fmu_subsystem::api&, void*, typed_group&, double*,
                          const char*&) noexcept;
template int typed_get<3>(const fmu_subsystem::api&, void*, typed_group&, double*,
                          const char*&) noexcept;
template int typed_set<2>(const fmu_subsystem::api&, void*, typed_group&, const double*, bool,
                          const char*&) noexcept;
template int typed_set<3>(const fmu_subsystem::api&, void*, typed_group&, const double*, bool,
                          const char*&) noexcept;

}  // namespace cosim::fmi
