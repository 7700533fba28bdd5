#pragma once
// Hand-made FMU archives for the tests: libzip writes the entry names exactly as given (so a
// crafted "../evil" entry is possible), and one FMI 2.0 description with known content.
#include <gtest/gtest.h>
#include <zip.h>

#include <fstream>
#include <iterator>
#include <list>
#include <string>
#include <utility>
#include <vector>

namespace cosim::test {

using entries = std::vector<std::pair<std::string, std::string>>;

// Writes a zip with exactly these entry names (libzip stores names as given, so an entry
// can be "../evil" as in a crafted archive).
inline void write_zip(const std::string& path, const entries& files) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr) << err;
  std::list<std::string> keep;  // buffers must live until zip_close
  for (const auto& [name, data] : files) {
    keep.push_back(data);
    zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
    ASSERT_NE(src, nullptr);
    ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0) << name;
  }
  ASSERT_EQ(zip_close(z), 0);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An FMI 2.0 description with a Real input, output and parameter (range 0..10), an Integer
// and a String parameter; `id` is its model identifier.
inline std::string description(const std::string& id = "m") {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="m" guid="{g}">
  <CoSimulation modelIdentifier=")" +
         id + R"("/>
  <DefaultExperiment startTime="1" stopTime="4" stepSize="0.25"/>
  <ModelVariables>
    <ScalarVariable name="u" valueReference="1" causality="input"><Real start="0" unit="N"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="2" causality="output"><Real unit="m"/></ScalarVariable>
    <ScalarVariable name="p" valueReference="3" causality="parameter" variability="fixed"><Real start="1" min="0" max="10" unit="kg"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="4" causality="parameter" variability="fixed"><Integer start="2"/></ScalarVariable>
    <ScalarVariable name="label" valueReference="5" causality="parameter" variability="fixed"><String start="a"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="2" dependencies=""/></Outputs></ModelStructure>
</fmiModelDescription>
)";
}

}  // namespace cosim::test
