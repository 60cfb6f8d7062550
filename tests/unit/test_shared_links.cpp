// Links as shared resources in the event engine: transfers on one link at one time divide its
// bandwidth (max-min fair, SimGrid's flow model). Every expected time is counted by hand in the
// comment beside it: a task's link time is what it takes alone, a link's capacity is one such
// unit per nanosecond.
#include <gtest/gtest.h>

#include <vector>

#include "sim/event_engine.h"

namespace cc {
namespace {

TEST(SharedLinks, OneTransferAloneIsUnchanged) {
  EventEngine e;
  const LinkId nic = e.add_link("nic");
  const TaskId t = e.add_task(100, {e.add_stream("p2p")});
  e.use_links(t, 100, {nic});
  // A task with a part of its own first (latency, or compute before its communication).
  const TaskId later = e.add_task(130, {e.add_stream("dp")});
  e.use_links(later, 30, {e.add_link("other nic")});
  e.run();
  EXPECT_EQ(e.start(t), 0);
  EXPECT_EQ(e.end(t), 100);  // alone: its own 100 ns
  EXPECT_EQ(e.end(later), 130);
  EXPECT_EQ(e.duration(t), e.duration_alone(t));
}

TEST(SharedLinks, TwoTransfersOverOneNicAtOnceTakeTwiceAsLongAsOneAlone) {
  // A DP reduction and a pipeline send leave the same NIC at time 0: each gets half of it.
  EventEngine e;
  const LinkId nic = e.add_link("nic out");
  const TaskId send = e.add_task(100, {e.add_stream("p2p")});
  const TaskId reduce = e.add_task(100, {e.add_stream("dp")});
  e.use_links(send, 100, {nic});
  e.use_links(reduce, 100, {nic});
  e.run();
  EXPECT_EQ(e.end(send), 200);  // 100 ns of link time at rate 1/2
  EXPECT_EQ(e.end(reduce), 200);
  EXPECT_EQ(e.makespan(), 200);
}

TEST(SharedLinks, TransfersOnDifferentLinksDoNotSlowEachOther) {
  EventEngine e;
  const TaskId a = e.add_task(100, {e.add_stream("a")});
  const TaskId b = e.add_task(100, {e.add_stream("b")});
  e.use_links(a, 100, {e.add_link("nic 0")});
  e.use_links(b, 100, {e.add_link("nic 1")});
  const TaskId compute = e.add_task(100, {e.add_stream("compute")});  // no links at all
  e.run();
  EXPECT_EQ(e.end(a), 100);
  EXPECT_EQ(e.end(b), 100);
  EXPECT_EQ(e.end(compute), 100);
}

TEST(SharedLinks, ATransferJoiningMidwaySlowsTheOneAlreadyThere) {
  EventEngine e;
  const LinkId nic = e.add_link("nic");
  const StreamId s1 = e.add_stream("p2p"), s2 = e.add_stream("dp");
  const TaskId first = e.add_task(100, {s1});
  e.add_task(50, {s2});  // keeps the second transfer back until 50
  const TaskId second = e.add_task(100, {s2});
  e.use_links(first, 100, {nic});
  e.use_links(second, 100, {nic});
  e.run();
  EXPECT_EQ(e.start(second), 50);
  // first: 50 alone (50 left), then 1/2 until done: 50 / (1/2) = 100 more -> 150.
  EXPECT_EQ(e.end(first), 150);
  // second: 1/2 from 50 to 150 (50 done), then alone for the other 50 -> 200.
  EXPECT_EQ(e.end(second), 200);
}

TEST(SharedLinks, ThreeTransfersShareOneLinkThreeWays) {
  EventEngine e;
  const LinkId nic = e.add_link("nic");
  std::vector<TaskId> ts;
  for (int i = 0; i < 3; ++i) {
    ts.push_back(e.add_task(90, {e.add_stream("s" + std::to_string(i))}));
    e.use_links(ts.back(), 90, {nic});
  }
  e.run();
  for (TaskId t : ts) EXPECT_EQ(e.end(t), 270);  // 90 at rate 1/3
}

TEST(SharedLinks, OnlyTheLinkPartOfATaskIsShared) {
  // A pass computes for 40 ns, then communicates for 60 ns; a transfer holds the NIC meanwhile.
  EventEngine e;
  const LinkId nic = e.add_link("nic");
  const TaskId pass = e.add_task(100, {e.add_stream("compute")});
  e.use_links(pass, 60, {nic});
  const TaskId transfer = e.add_task(100, {e.add_stream("dp")});
  e.use_links(transfer, 100, {nic});
  e.run();
  // transfer alone until 40 (60 left); then both at 1/2: the pass's 60 take 120 -> 160, and the
  // transfer gets 60 done by 160 -> done then too.
  EXPECT_EQ(e.end(pass), 160);
  EXPECT_EQ(e.end(transfer), 160);
}

TEST(SharedLinks, ATaskOnSeveralLinksGetsItsMaxMinFairShare) {
  // x crosses links A and B; y uses A alone; z1, z2 use B. B is the bottleneck (1/3 each for x,
  // z1, z2); A's leftover 2/3 goes to y — max-min fairness, where taking the smallest 1/k over a
  // task's links would leave y at 1/2 and A partly idle.
  EventEngine e;
  const LinkId a = e.add_link("A"), b = e.add_link("B");
  auto task = [&](const char* name, std::vector<LinkId> links) {
    const TaskId t = e.add_task(60, {e.add_stream(name)});
    e.use_links(t, 60, links);
    return t;
  };
  const TaskId x = task("x", {a, b}), y = task("y", {a}), z1 = task("z1", {b}), z2 = task("z2", {b});
  e.run();
  EXPECT_EQ(e.end(y), 90);  // 60 at 2/3
  // x, z1, z2 at 1/3 throughout (y leaving frees A, but B still splits three ways): 60 · 3.
  EXPECT_EQ(e.end(x), 180);
  EXPECT_EQ(e.end(z1), 180);
  EXPECT_EQ(e.end(z2), 180);
}

TEST(SharedLinks, RunsAreDeterministic) {
  auto build_and_run = [] {
    EventEngine e;
    std::vector<LinkId> links;
    for (int l = 0; l < 4; ++l) links.push_back(e.add_link("l" + std::to_string(l)));
    std::vector<StreamId> streams;
    for (int s = 0; s < 6; ++s) streams.push_back(e.add_stream("s" + std::to_string(s)));
    std::vector<TaskId> ts;
    for (int i = 0; i < 60; ++i) {
      const TaskId t = e.add_task(15 + 7 * (i % 5), {streams[static_cast<std::size_t>(i % 6)]});
      e.use_links(t, 5 + 3 * (i % 4), {links[static_cast<std::size_t>(i % 4)], links[static_cast<std::size_t>((i / 4) % 4)]});
      if (i >= 7) e.add_dependency(ts[static_cast<std::size_t>(i - 7)], t);
      ts.push_back(t);
    }
    e.run();
    std::vector<SimTime> trace;
    for (TaskId t : ts) trace.insert(trace.end(), {e.start(t), e.end(t)});
    return trace;
  };
  EXPECT_EQ(build_and_run(), build_and_run());
}

TEST(SharedLinks, LinkTimeBeyondTheTaskIsRefused) {
  EventEngine e;
  const TaskId t = e.add_task(10, {e.add_stream("s")});
  EXPECT_THROW(e.use_links(t, 11, {e.add_link("nic")}), std::logic_error);
}

}  // namespace
}  // namespace cc
