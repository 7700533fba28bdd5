// Every FMI number type through the importer (tests/fmus/typed: y_T = u_T and z_T = p_T
// inside the FMU, in the type T). What an input of type T receives is the double the runtime
// delivers, rounded to the nearest integer and saturated at T's range (Float32: rounded to
// float); parameters outside the range are refused. The expected values below are written
// out by hand for each input value and type, not computed by the conversion under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_binary.hpp"
#include "row_table.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::fmu_path;

// The input, one value per macro step (0.1 s) from a CSV source at its own sample times.
const std::vector<double> input = {-300.0, -128.4,  -1.6,         0.4,  100.7, 255.2,
                                   300.0,  70000.3, 5000000000.6, 1e19, 1e20};

constexpr double i64_max = 9223372036854775807.0;   // rounds to 2^63 as a double
constexpr double u64_max = 18446744073709551615.0;  // rounds to 2^64

struct expected_column {
  const char* name;
  std::vector<double> values;
};

std::vector<expected_column> expected_fmi3() {
  return {
      {"i8", {-128, -128, -2, 0, 101, 127, 127, 127, 127, 127, 127}},
      {"u8", {0, 0, 0, 0, 101, 255, 255, 255, 255, 255, 255}},
      {"i16", {-300, -128, -2, 0, 101, 255, 300, 32767, 32767, 32767, 32767}},
      {"u16", {0, 0, 0, 0, 101, 255, 300, 65535, 65535, 65535, 65535}},
      {"u32", {0, 0, 0, 0, 101, 255, 300, 70000, 4294967295.0, 4294967295.0, 4294967295.0}},
      {"i64", {-300, -128, -2, 0, 101, 255, 300, 70000, 5000000001.0, i64_max, i64_max}},
      {"u64", {0, 0, 0, 0, 101, 255, 300, 70000, 5000000001.0, 1e19, u64_max}},
      {"mode", {-300, -128, -2, 0, 101, 255, 300, 70000, 5000000001.0, i64_max, i64_max}},
  };
}

struct run_result {
  cosim::run_outcome out;
  cosim::test::row_table rows;
};

std::string write_input(const cosim::test::temp_dir& dir) {
  std::ofstream csv(dir / "in.csv");
  csv << "t,v\n";
  csv.precision(17);
  for (std::size_t i = 0; i < input.size(); ++i)
    csv << 0.1 * static_cast<double>(i) << "," << input[i] << "\n";
  return "in.csv";
}

std::string system_text(const std::string& fmu, const std::vector<std::string>& names,
                        const std::string& params, const std::string& run) {
  std::string t = "[run]\nduration = 1.0\nmacro_step = 0.1\n" + run + "\n[subsystems.m]\nfmu = \"" +
                  fmu_path(fmu) + "\"\n" +
                  (params.empty() ? "" : "parameters = { " + params + " }\n");
  for (const std::string& n : names)
    t += "\n[[sources]]\nto = \"m.u_" + n + "\"\nsignal = \"csv:in.csv:v\"\n";
  t += "\n[output]\nrecord = [";
  for (const std::string& n : names) t += "\"m.y_" + n + "\", \"m.z_" + n + "\", ";
  return t + "]\n";
}

void run_system(const std::string& text, run_result& r) {
  const cosim::test::temp_dir dir;
  write_input(dir);
  cosim::config::run_request req;
  req.scenario = dir.file("system.toml", text);
  req.out_dir = dir / "out";
  req.quiet = true;
  req.also = &r.rows;
  r.out = cosim::config::run_scenario(req, nullptr).outcome;
}

const std::vector<std::string> fmi3_names = {"f32", "i8",  "u8",  "i16", "u16",
                                             "u32", "i64", "u64", "mode"};

TEST(FmuTypes, EveryFmi3NumberTypeGetsItsInputRoundedAndSaturatedAtItsRange) {
  for (const char* mode : {"offline", "threaded"}) {
    SCOPED_TRACE(mode);
    run_result r;
    run_system(system_text("typed_fmi3", fmi3_names, "", std::string("mode = \"") + mode + "\"\n"),
               r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), input.size());
    for (std::size_t i = 0; i < input.size(); ++i) {
      // Float32: the input rounded to float, and back exactly.
      EXPECT_EQ(r.rows.at(i, "m.y_f32"), static_cast<double>(static_cast<float>(input[i])))
          << "row " << i;
      for (const expected_column& c : expected_fmi3())
        EXPECT_EQ(r.rows.at(i, std::string("m.y_") + c.name), c.values[i])
            << c.name << ", row " << i << ", input " << input[i];
    }
  }
}

// Ties round away from zero for every integer type (as Integer/Int32 and the Boolean's 0.5),
// and the recorded input column is what the FMU received (its echo y), not the double fed.
TEST(FmuTypes, TiesRoundAwayFromZeroInEveryIntegerTypeAndRecordedInputsAreWhatTheFmuGot) {
  const std::vector<double> ties = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 300.0, -300.0};
  const std::vector<double> wide = {-3, -2, -1, 1, 2, 3, 300, -300};
  const std::vector<expected_column> fmi3 = {{"i8", {-3, -2, -1, 1, 2, 3, 127, -128}},
                                             {"u8", {0, 0, 0, 1, 2, 3, 255, 0}},
                                             {"i16", wide},
                                             {"u16", {0, 0, 0, 1, 2, 3, 300, 0}},
                                             {"i64", wide},
                                             {"mode", wide}};
  for (const char* fmu : {"typed_fmi3", "typed_fmi2"}) {
    SCOPED_TRACE(fmu);
    const bool v3 = std::string(fmu) == "typed_fmi3";
    const std::vector<expected_column> cols =
        v3 ? fmi3 : std::vector<expected_column>{{"mode", wide}};
    std::string text = "[run]\nduration = 0.7\nmacro_step = 0.1\n\n[subsystems.m]\nfmu = \"" +
                       fmu_path(fmu) + "\"\n";
    std::string record;
    for (const expected_column& c : cols) {
      text +=
          std::string("\n[[sources]]\nto = \"m.u_") + c.name + "\"\nsignal = \"csv:ties.csv:v\"\n";
      record += std::string("\"m.y_") + c.name + "\", \"m.u_" + c.name + "\", ";
    }
    text += "\n[output]\nrecord = [" + record + "]\n";
    const cosim::test::temp_dir dir;
    {
      std::ofstream csv(dir / "ties.csv");
      csv << "t,v\n";
      for (std::size_t i = 0; i < ties.size(); ++i)
        csv << 0.1 * static_cast<double>(i) << "," << ties[i] << "\n";
    }
    cosim::config::run_request req;
    req.scenario = dir.file("system.toml", text);
    req.out_dir = dir / "out";
    req.quiet = true;
    run_result r;
    req.also = &r.rows;
    r.out = cosim::config::run_scenario(req, nullptr).outcome;
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    ASSERT_EQ(r.rows.rows(), ties.size());
    for (std::size_t i = 0; i < ties.size(); ++i)
      for (const expected_column& c : cols) {
        EXPECT_EQ(r.rows.at(i, std::string("m.y_") + c.name), c.values[i])
            << c.name << ", row " << i << ", input " << ties[i];
        EXPECT_EQ(r.rows.at(i, std::string("m.u_") + c.name), c.values[i])
            << c.name << ", row " << i << ", input " << ties[i];
      }
  }
}

TEST(FmuTypes, ParametersOfEveryTypeReachTheFmu) {
  run_result r;
  run_system(system_text("typed_fmi3", fmi3_names,
                         "p_f32 = 0.1, p_i8 = -128, p_u16 = 65535, p_u64 = 12345678901, "
                         "p_mode = 1",
                         ""),
             r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  const std::size_t last = r.rows.rows() - 1;
  EXPECT_EQ(r.rows.at(last, "m.z_f32"), static_cast<double>(0.1F));
  EXPECT_EQ(r.rows.at(last, "m.z_i8"), -128.0);
  EXPECT_EQ(r.rows.at(last, "m.z_u16"), 65535.0);
  EXPECT_EQ(r.rows.at(last, "m.z_u64"), 12345678901.0);
  EXPECT_EQ(r.rows.at(last, "m.z_mode"), 1.0);
  // Not set: the start values of modelDescription.xml.
  EXPECT_EQ(r.rows.at(last, "m.z_u8"), 200.0);
  EXPECT_EQ(r.rows.at(last, "m.z_i16"), -30000.0);
  EXPECT_EQ(r.rows.at(last, "m.z_u32"), 4000000000.0);
  EXPECT_EQ(r.rows.at(last, "m.z_i64"), -9000000000.0);
}

TEST(FmuTypes, AParameterOutsideItsTypesRangeIsRefusedByName) {
  for (const auto& [set, type] :
       {std::pair{"p_u8 = 256", "UInt8"}, {"p_i8 = -129", "Int8"}, {"p_u32 = -1", "UInt32"}}) {
    SCOPED_TRACE(set);
    run_result r;
    try {
      run_system(system_text("typed_fmi3", {"i8"}, set, ""), r);
      ADD_FAILURE() << "accepted";
    } catch (const cosim::error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(std::string(set).substr(0, 4)), std::string::npos) << m;
      EXPECT_NE(m.find(std::string("outside the ") + type + " range"), std::string::npos) << m;
    }
  }
}

TEST(FmuTypes, Fmi2EnumerationIsExchangedAsInteger) {
  run_result r;
  run_system(system_text("typed_fmi2", {"mode"}, "p_mode = 1", ""), r);
  ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
  // FMI 2 Enumeration values are fmi2Integer (32-bit).
  const std::vector<double> want = {-300,  -128,         -2,           0,           101, 255, 300,
                                    70000, 2147483647.0, 2147483647.0, 2147483647.0};
  for (std::size_t i = 0; i < input.size(); ++i) {
    EXPECT_EQ(r.rows.at(i, "m.y_mode"), want[i]) << "row " << i;
    EXPECT_EQ(r.rows.at(i, "m.z_mode"), 1.0) << "row " << i;
  }
}

TEST(FmuTypes, BooleanInputIsTheNearestOfFalseAndTrue) {
  // As the integer types: rounded to the nearest of 0 and 1, saturated (the input column:
  // -300, -128.4, -1.6, 0.4, then 100.7 and larger).
  for (const char* fmu : {"typed_fmi2", "typed_fmi3"}) {
    SCOPED_TRACE(fmu);
    run_result r;
    run_system(system_text(fmu, {"flag"}, "p_flag = false", ""), r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    for (std::size_t i = 0; i < input.size(); ++i) {
      EXPECT_EQ(r.rows.at(i, "m.y_flag"), input[i] >= 0.5 ? 1.0 : 0.0) << "row " << i;
      EXPECT_EQ(r.rows.at(i, "m.z_flag"), 0.0) << "row " << i;
    }
  }
}

// A Real parameter without start (FMI 2 requires one; some FMUs omit it) keeps the FMU's
// own value (777 in typed.cpp) unless set; it was overwritten with 0.
TEST(FmuTypes, AParameterWithoutStartKeepsTheFmusOwnValueUnlessSet) {
  for (const auto& [params, want] : {std::pair{std::string(), 777.0}, {"p_own = 3.5", 3.5}}) {
    SCOPED_TRACE(params);
    run_result r;
    std::string text = system_text("typed_fmi2", {"mode"}, params, "");
    text.replace(text.find("record = ["), 10, "record = [\"m.z_own\", ");
    run_system(text, r);
    ASSERT_EQ(r.out.status, cosim::run_status::completed) << r.out.message;
    EXPECT_EQ(r.rows.at(0, "m.z_own"), want);
    EXPECT_EQ(r.rows.at(r.rows.rows() - 1, "m.z_own"), want);
  }
}

}  // namespace
