// modelDescription.xml parsing (FMI 2.0 Sect. 2.2, FMI 3.0 Sect. 2.4), on hand-written
// descriptions: the expected values are what the XML says and what the standard defines
// (defaults, units through declared types, ModelStructure dependencies -> feedthrough).
#include <gtest/gtest.h>

#include <string>

#include "cosim/fmi/model_description.hpp"
#include "cosim/runtime/error.hpp"

namespace {

using namespace cosim::fmi;

const char* fmi2_xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="m2" guid="{g-2}" description="two">
  <CoSimulation modelIdentifier="m2" canHandleVariableCommunicationStepSize="true"
    canGetAndSetFMUstate="true" maxOutputDerivativeOrder="1"/>
  <TypeDefinitions>
    <SimpleType name="Length"><Real quantity="Length" unit="m"/></SimpleType>
  </TypeDefinitions>
  <DefaultExperiment startTime="0.5" stopTime="2.5" stepSize="1e-3" tolerance="1e-6"/>
  <ModelVariables>
    <ScalarVariable name="u" valueReference="1" causality="input"><Real start="0.25" unit="N"/></ScalarVariable>
    <ScalarVariable name="x" valueReference="2" causality="output"><Real declaredType="Length"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="3" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="z" valueReference="4" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="n" valueReference="5" causality="parameter" variability="fixed">
      <Integer start="3" min="1" max="10"/></ScalarVariable>
    <ScalarVariable name="on" valueReference="6" causality="parameter" variability="tunable">
      <Boolean start="true"/></ScalarVariable>
    <ScalarVariable name="label" valueReference="7" causality="parameter" variability="fixed">
      <String start="hello"/></ScalarVariable>
    <ScalarVariable name="s" valueReference="8"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="2" dependencies="8"/>
      <Unknown index="3" dependencies="1 8" dependenciesKind="fixed dependent"/>
      <Unknown index="4"/>
    </Outputs>
  </ModelStructure>
</fmiModelDescription>
)";

TEST(ModelDescription, Fmi2Attributes) {
  const model_description md = parse_model_description(fmi2_xml, "m2.fmu");
  EXPECT_EQ(md.fmi_major, 2);
  EXPECT_EQ(md.model_name, "m2");
  EXPECT_EQ(md.token, "{g-2}");
  ASSERT_TRUE(md.cosim.has_value());
  EXPECT_EQ(md.cosim->model_identifier, "m2");
  EXPECT_TRUE(md.cosim->can_handle_variable_communication_step_size);
  EXPECT_TRUE(md.cosim->can_get_and_set_fmu_state);
  EXPECT_EQ(md.cosim->max_output_derivative_order, 1);
  EXPECT_FALSE(md.cosim->has_event_mode);
  EXPECT_EQ(md.experiment.start_time, 0.5);
  EXPECT_EQ(md.experiment.stop_time, 2.5);
  EXPECT_EQ(md.experiment.step_size, 1e-3);
  EXPECT_EQ(md.experiment.tolerance, 1e-6);
  ASSERT_EQ(md.variables.size(), 8u);
  const variable& u = md.variables[md.find("u")];
  EXPECT_EQ(u.causal, causality::input);
  EXPECT_EQ(u.variab, variability::continuous);  // FMI 2 default
  EXPECT_EQ(u.unit, "N");
  EXPECT_EQ(u.start, 0.25);
  // The unit of a declared type (TypeDefinitions) when the variable has none.
  EXPECT_EQ(md.variables[md.find("x")].unit, "m");
  const variable& n = md.variables[md.find("n")];
  EXPECT_EQ(n.type, var_type::integer);
  EXPECT_EQ(n.start, 3.0);
  EXPECT_EQ(n.min, 1.0);
  EXPECT_EQ(n.max, 10.0);
  EXPECT_EQ(md.variables[md.find("on")].start, 1.0);
  const variable& label = md.variables[md.find("label")];
  EXPECT_EQ(label.type, var_type::string);
  EXPECT_FALSE(label.start.has_value());
  EXPECT_EQ(label.start_text, "hello");
  EXPECT_EQ(md.variables[md.find("s")].causal, causality::local);  // FMI 2 default
  EXPECT_EQ(md.find("nope"), model_description::npos);
  EXPECT_EQ(binary_path_in_fmu(md), "binaries/linux64/m2.so");
}

TEST(ModelDescription, Fmi2FeedthroughFromModelStructure) {
  const model_description md = parse_model_description(fmi2_xml, "m2.fmu");
  // x depends on the local s only; y on the input u; z lists no dependencies, which FMI 2.0
  // Sect. 2.2.8 defines as "depends on all knowns", the input included.
  EXPECT_FALSE(md.feedthrough(md.find("x")));
  EXPECT_TRUE(md.feedthrough(md.find("y")));
  EXPECT_TRUE(md.feedthrough(md.find("z")));
}

const char* fmi3_xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="m3" instantiationToken="{t-3}">
  <CoSimulation modelIdentifier="m3_id" hasEventMode="true" providesIntermediateUpdate="true"
    mightReturnEarlyFromDoStep="true" canGetAndSetFMUState="false" maxOutputDerivativeOrder="2"/>
  <TypeDefinitions><Float64Type name="Speed" unit="m/s"/></TypeDefinitions>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent"/>
    <Float64 name="u" valueReference="10" causality="input" start="1.5"/>
    <Float64 name="v" valueReference="11" causality="output" declaredType="Speed"/>
    <Int32 name="k" valueReference="12" causality="output"/>
    <Boolean name="b" valueReference="13" causality="input" start="false"/>
    <Float32 name="f" valueReference="14" causality="parameter" variability="fixed" start="2"/>
    <Float64 name="arr" valueReference="15" causality="parameter" variability="fixed" start="1 2">
      <Dimension start="2"/>
    </Float64>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="11" dependencies=""/>
    <Output valueReference="12" dependencies="13"/>
  </ModelStructure>
</fmiModelDescription>
)";

TEST(ModelDescription, Fmi3Attributes) {
  const model_description md = parse_model_description(fmi3_xml, "m3.fmu");
  EXPECT_EQ(md.fmi_major, 3);
  EXPECT_EQ(md.token, "{t-3}");
  ASSERT_TRUE(md.cosim.has_value());
  EXPECT_TRUE(md.cosim->has_event_mode);
  EXPECT_TRUE(md.cosim->provides_intermediate_update);
  EXPECT_TRUE(md.cosim->might_return_early_from_do_step);
  EXPECT_EQ(md.cosim->max_output_derivative_order, 2);
  EXPECT_FALSE(md.experiment.stop_time.has_value());
  EXPECT_EQ(md.variables[md.find("time")].causal, causality::independent);
  EXPECT_EQ(md.variables[md.find("v")].unit, "m/s");
  const variable& k = md.variables[md.find("k")];
  EXPECT_EQ(k.type, var_type::integer);
  EXPECT_EQ(k.variab, variability::discrete);  // FMI 3: continuous is the default for floats only
  EXPECT_EQ(md.variables[md.find("u")].variab, variability::continuous);
  EXPECT_EQ(md.variables[md.find("b")].start, 0.0);
  EXPECT_EQ(md.variables[md.find("f")].type, var_type::float32);
  EXPECT_TRUE(is_supported(var_type::float32));  // exchanged as a double
  EXPECT_FALSE(is_supported(var_type::string));
  EXPECT_FALSE(is_supported(var_type::binary));
  EXPECT_TRUE(md.variables[md.find("arr")].is_array);
  EXPECT_EQ(binary_path_in_fmu(md), "binaries/x86_64-linux/m3_id.so");
  EXPECT_STREQ(type_name(var_type::real, 3), "Float64");
  EXPECT_STREQ(type_name(var_type::real, 2), "Real");
  // FMI 3 dependencies are value references: k depends on the input b, v on nothing.
  EXPECT_FALSE(md.feedthrough(md.find("v")));
  EXPECT_TRUE(md.feedthrough(md.find("k")));
}

std::string error_of(const std::string& xml) {
  try {
    (void)parse_model_description(xml, "/x/bad.fmu");
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelDescription, MalformedXmlNamesFmuAndLine) {
  const std::string e =
      error_of("<?xml version=\"1.0\"?>\n<fmiModelDescription fmiVersion=\"2.0\"\n>\n<a>");
  EXPECT_NE(e.find("/x/bad.fmu: modelDescription.xml:"), std::string::npos) << e;
  EXPECT_NE(e.find("not well-formed XML"), std::string::npos) << e;
}

TEST(ModelDescription, RefusedDescriptions) {
  EXPECT_NE(error_of("<foo/>").find("not <fmiModelDescription>"), std::string::npos);
  EXPECT_NE(error_of(R"(<fmiModelDescription fmiVersion="1.0" modelName="m" guid="g"/>)")
                .find("fmiVersion=\"1.0\" is not supported"),
            std::string::npos);
  const std::string no_vr =
      error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="q"><Real/></ScalarVariable></ModelVariables></fmiModelDescription>)");
  EXPECT_NE(no_vr.find("modelDescription.xml:2:"), std::string::npos) << no_vr;
  EXPECT_NE(no_vr.find("variable \"q\" needs a valueReference"), std::string::npos) << no_vr;
  const std::string bad_start =
      error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="q" valueReference="1"><Real start="1,5"/></ScalarVariable></ModelVariables></fmiModelDescription>)");
  EXPECT_NE(bad_start.find("start=\"1,5\" is not a number"), std::string::npos) << bad_start;
  const std::string twice =
      error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="q" valueReference="1"><Real/></ScalarVariable>
<ScalarVariable name="q" valueReference="2"><Real/></ScalarVariable></ModelVariables></fmiModelDescription>)");
  EXPECT_NE(twice.find("variable name \"q\" appears twice"), std::string::npos) << twice;
  // FMI 3.0: one value reference, one variable (an input sharing an output's would be set
  // through it); FMI 2.0 aliases may share one.
  const std::string vr3 =
      error_of(R"(<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="g">
<ModelVariables><Float64 name="y" valueReference="7" causality="output"/>
<Float64 name="u" valueReference="7" causality="input" start="0"/></ModelVariables></fmiModelDescription>)");
  EXPECT_NE(vr3.find("modelDescription.xml:3:"), std::string::npos) << vr3;
  EXPECT_NE(vr3.find("valueReference 7 of \"u\" is also that of \"y\""), std::string::npos) << vr3;
  EXPECT_EQ(error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="q" valueReference="1"><Real/></ScalarVariable>
<ScalarVariable name="q_alias" valueReference="1"><Real/></ScalarVariable></ModelVariables></fmiModelDescription>)"),
            "");
  // The model identifier names a file inside the unpack folder: no path characters.
  const std::string id = error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<CoSimulation modelIdentifier="../../evil"/><ModelVariables/></fmiModelDescription>)");
  EXPECT_NE(id.find("is not a valid C identifier"), std::string::npos) << id;
  const std::string index =
      error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="q" valueReference="1"><Real/></ScalarVariable></ModelVariables>
<ModelStructure><Outputs><Unknown index="2"/></Outputs></ModelStructure></fmiModelDescription>)");
  EXPECT_NE(index.find("index must be from 1 to 1"), std::string::npos) << index;
}

TEST(ModelDescription, DependencyKindsAndOutputsAreChecked) {
  // One known kind per dependency, only with dependencies, each output listed once.
  const std::string head =
      R"(<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="g">
<ModelVariables><Float64 name="u" valueReference="1" causality="input" start="0"/>
<Float64 name="v" valueReference="2" causality="input" start="0"/>
<Float64 name="y" valueReference="3" causality="output"/></ModelVariables>
<ModelStructure>)";
  const auto with = [&](const std::string& outputs) {
    return error_of(head + outputs + "</ModelStructure></fmiModelDescription>");
  };
  EXPECT_EQ(
      with(R"(<Output valueReference="3" dependencies="1 2" dependenciesKind="fixed dependent"/>)"),
      "");
  std::string e =
      with(R"(<Output valueReference="3" dependencies="1" dependenciesKind="wobbly"/>)");
  EXPECT_NE(e.find("modelDescription.xml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("dependenciesKind \"wobbly\" is not one of"), std::string::npos) << e;
  e = with(R"(<Output valueReference="3" dependencies="1 2" dependenciesKind="fixed"/>)");
  EXPECT_NE(e.find("lists 1 kind for 2 dependencies"), std::string::npos) << e;
  e = with(R"(<Output valueReference="3" dependenciesKind="fixed"/>)");
  EXPECT_NE(e.find("dependenciesKind without dependencies"), std::string::npos) << e;
  e = with(R"(<Output valueReference="3" dependencies="1"/><Output valueReference="3"/>)");
  EXPECT_NE(e.find("output \"y\" is listed twice"), std::string::npos) << e;
  // FMI 2.0 knows no "independent" kind.
  e = error_of(R"(<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
<ModelVariables><ScalarVariable name="u" valueReference="1" causality="input"><Real start="0"/></ScalarVariable>
<ScalarVariable name="y" valueReference="2" causality="output"><Real/></ScalarVariable></ModelVariables>
<ModelStructure><Outputs><Unknown index="2" dependencies="1" dependenciesKind="independent"/></Outputs></ModelStructure></fmiModelDescription>)");
  EXPECT_NE(e.find("dependenciesKind \"independent\" is not one of"), std::string::npos) << e;
}

}  // namespace
