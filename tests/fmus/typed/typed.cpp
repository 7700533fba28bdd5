// Echo of every FMI number type: per type an input u and a parameter p, with outputs y = u
// and z = p in the type itself, so the importer's conversions (double -> type on a set,
// type -> double on a get) show in the results unchanged. FMI 3 (typed_fmi3): Float32, Int8,
// UInt8, Int16, UInt16, UInt32, Int64, UInt64 and an Enumeration (Int64 values); FMI 2
// (typed_fmi2): an Enumeration (Integer values), and a Real parameter without start. Both: a
// Boolean. Each
// modelDescription.xml lists only its own version's variables; the model holds all of them.
#include <cstdint>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

template <typename T>
struct echo {
  T u{}, y{}, p{}, z{};
};

class typed final : public cosim::fmu_kit::model {
 public:
  typed() {
    add(0, causality::local, &time_);
    declare(10, f32_);
    declare(20, i8_);
    declare(30, u8_);
    declare(40, i16_);
    declare(50, u16_);
    declare(60, u32_);
    declare(70, i64_);
    declare(80, u64_);
    declare(90, enum3_);
    declare(100, enum2_);
    declare(120, flag_);  // Boolean, FMI 2 and 3
    // FMI 2 only: a Real parameter its modelDescription.xml gives no start (non-compliant,
    // but seen): the importer must leave the FMU's own value unless the user sets one.
    add(110, causality::parameter, &own_);
    add(111, causality::output, &own_out_);
    // The parameters' starts of modelDescription.xml, as an exporting tool builds them in
    // (the importer writes only the values a user sets).
    f32_.p = 1.5F;
    i8_.p = -7;
    u8_.p = 200;
    i16_.p = -30000;
    u16_.p = 60000;
    u32_.p = 4000000000U;
    i64_.p = -9000000000;
    u64_.p = 10000000000U;
    enum3_.p = 2;
    enum2_.p = 2;
    flag_.p = true;
  }

  bool initialize(double t0, std::string& /*why*/) override {
    time_ = t0;
    calculate();
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    time_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

  void calculate() noexcept override {
    pass(f32_);
    pass(i8_);
    pass(u8_);
    pass(i16_);
    pass(u16_);
    pass(u32_);
    pass(i64_);
    pass(u64_);
    pass(enum3_);
    pass(enum2_);
    pass(flag_);
    own_out_ = own_;
  }

 private:
  template <typename T>
  void declare(std::uint32_t base, echo<T>& e) {
    add(base + 1, causality::input, &e.u);
    add(base + 2, causality::output, &e.y);
    add(base + 3, causality::parameter, &e.p);
    add(base + 4, causality::output, &e.z);
  }
  template <typename T>
  static void pass(echo<T>& e) noexcept {
    e.y = e.u;
    e.z = e.p;
  }

  double time_ = 0.0;
  echo<float> f32_;
  echo<std::int8_t> i8_;
  echo<std::uint8_t> u8_;
  echo<std::int16_t> i16_;
  echo<std::uint16_t> u16_;
  echo<std::uint32_t> u32_;
  echo<std::int64_t> i64_;
  echo<std::uint64_t> u64_;
  echo<std::int64_t> enum3_;  // FMI 3 Enumeration: Int64 values
  echo<std::int32_t> enum2_;  // FMI 2 Enumeration: Integer values
  echo<bool> flag_;
  double own_ = 777.0, own_out_ = 0.0;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<typed>();
}
const char* const model_token = "{5e2c8a41-7b3d-4f19-9c06-d2a4e8b1f370}";
}  // namespace cosim::fmu_kit
