// The RAII layer over Cyclone DDS: a command sample crosses a topic bit for bit (raw doubles,
// including -0.0, NaN payloads, denormals), a reader without a peer times out, and a
// writer that goes away is reported as lost.
#include "cosim/dds/entities.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "cosim_remote.h"

namespace {

using namespace cosim::dds;

std::string unique_partition(const char* test) {
  return std::string("cosim-test-") + test + "-" + std::to_string(::getpid());
}

qos_options test_qos(const std::string& partition) {
  qos_options q;
  q.partition = partition;
  q.lease_ns = DDS_MSECS(500);
  return q;
}

// Bit patterns, not values: as doubles -0.0 equals 0.0 and a NaN equals nothing.
template <std::size_t N>
void expect_same_bits(const double (&got)[N], const double (&sent)[N], const char* what) {
  for (std::size_t i = 0; i < N; ++i)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(sent[i]))
        << what << "[" << i << "]";
}

TEST(DdsEntities, CommandCrossesBitForBit) {
  const std::string part = unique_partition("bits");
  const participant a(0, part, DDS_MSECS(500)), b(0, part, DDS_MSECS(500));
  const dds_entity_t ta = make_topic(a, &cosim_remote_command_desc, "cosim_test_cmd");
  const dds_entity_t tb = make_topic(b, &cosim_remote_command_desc, "cosim_test_cmd");
  writer w(a, ta, test_qos(part));
  reader r(b, tb, test_qos(part));
  // A reply path too, so wait_for_peer sees both directions.
  const dds_entity_t ra = make_topic(a, &cosim_remote_command_desc, "cosim_test_back");
  const dds_entity_t rb = make_topic(b, &cosim_remote_command_desc, "cosim_test_back");
  writer wb(b, rb, test_qos(part));
  reader rback(a, ra, test_qos(part));
  ASSERT_TRUE(wait_for_peer(w, rback, DDS_SECS(20)));
  ASSERT_TRUE(wait_for_peer(wb, r, DDS_SECS(20)));

  auto sent = std::make_unique<cosim_remote_command>();
  std::memset(sent.get(), 0, sizeof(*sent));
  sent->seq = 42;
  sent->kind = 3;
  sent->t_ns = -7;
  sent->n_inputs = 5;
  const double specials[] = {-0.0, std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::quiet_NaN(), 1.0 / 3.0, -1e308};
  for (int i = 0; i < 5; ++i) {
    sent->input_value[i] = specials[i];
    sent->input_time_ns[i] = std::int64_t{1000} * i;
  }
  std::uint64_t payload = 0x7ff8dead0000beefULL;  // a NaN with a payload
  std::memcpy(&sent->input_correction[3], &payload, sizeof payload);
  ASSERT_TRUE(w.write(sent.get()));

  auto got = std::make_unique<cosim_remote_command>();
  std::memset(got.get(), 0xff, sizeof(*got));
  ASSERT_EQ(r.take(got.get(), DDS_SECS(20)), take_result::sample);
  EXPECT_EQ(got->seq, 42U);
  EXPECT_EQ(got->kind, 3);
  EXPECT_EQ(got->t_ns, -7);
  expect_same_bits(got->input_value, sent->input_value, "input_value");
  EXPECT_EQ(std::memcmp(got->input_time_ns, sent->input_time_ns, sizeof sent->input_time_ns), 0);
  expect_same_bits(got->input_correction, sent->input_correction, "input_correction");
  EXPECT_TRUE(std::signbit(got->input_value[0]));
}

TEST(DdsEntities, TakeWithoutWriterTimesOut) {
  const std::string part = unique_partition("timeout");
  const participant b(0, part);
  const dds_entity_t t = make_topic(b, &cosim_remote_reply_desc, "cosim_test_reply");
  reader r(b, t, test_qos(part));
  cosim_remote_reply rep{};
  EXPECT_EQ(r.take(&rep, DDS_MSECS(50)), take_result::timeout);
}

TEST(DdsEntities, WriterGoneIsLost) {
  const std::string part = unique_partition("lost");
  const participant b(0, part);
  reader r(b, make_topic(b, &cosim_remote_reply_desc, "cosim_test_lost"), test_qos(part));
  writer back(b, make_topic(b, &cosim_remote_reply_desc, "cosim_test_lost_back"), test_qos(part));
  {
    const participant a(0, part);
    writer w(a, make_topic(a, &cosim_remote_reply_desc, "cosim_test_lost"), test_qos(part));
    reader ra(a, make_topic(a, &cosim_remote_reply_desc, "cosim_test_lost_back"), test_qos(part));
    ASSERT_TRUE(wait_for_peer(back, r, DDS_SECS(20)));
    EXPECT_GT(r.alive_writers(), 0U);
  }  // the writer's participant is deleted here
  cosim_remote_reply rep{};
  EXPECT_EQ(r.take(&rep, DDS_SECS(20)), take_result::lost);
}

}  // namespace
