#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/event_engine.h"

namespace cc {
namespace {

TEST(EventEngine, StreamsRunInOrderAndDependenciesCrossStreams) {
  EventEngine e;
  const StreamId a = e.add_stream("a"), b = e.add_stream("b");
  const TaskId a1 = e.add_task(10, {a});
  const TaskId a2 = e.add_task(5, {a});
  const TaskId b1 = e.add_task(3, {b});
  const TaskId b2 = e.add_task(7, {b});
  e.add_dependency(a1, b2);  // b2 waits for a1 (ends at 10) although b is free at 3
  e.run();
  EXPECT_EQ(e.start(a2), 10);  // in order after a1
  EXPECT_EQ(e.start(b1), 0);
  EXPECT_EQ(e.start(b2), 10);
  EXPECT_EQ(e.end(b2), 17);
  EXPECT_EQ(e.makespan(), 17);
  EXPECT_EQ(e.waited_for(b2), a1);
  EXPECT_EQ(e.events_processed(), 4u);
}

TEST(EventEngine, ATaskOnSeveralStreamsWaitsForAllOfThem) {
  // A collective over two ranks starts when both ranks reach it.
  EventEngine e;
  const StreamId r0 = e.add_stream("rank0"), r1 = e.add_stream("rank1");
  e.add_task(4, {r0});
  const TaskId slow = e.add_task(9, {r1});
  const TaskId both = e.add_task(2, {r0, r1});
  const TaskId after = e.add_task(1, {r0});
  e.run();
  EXPECT_EQ(e.start(both), 9);  // max(4, 9)
  EXPECT_EQ(e.waited_for(both), slow);
  EXPECT_EQ(e.start(after), 11);
}

TEST(EventEngine, TasksWithoutStreamsAreSyncPoints) {
  EventEngine e;
  const StreamId s = e.add_stream("s"), t = e.add_stream("t");
  const TaskId x = e.add_task(6, {s});
  const TaskId y = e.add_task(8, {t});
  const TaskId barrier = e.add_task(1, std::vector<StreamId>{});
  e.add_dependency(x, barrier);
  e.add_dependency(y, barrier);
  e.run();
  EXPECT_EQ(e.start(barrier), 8);
}

TEST(EventEngine, EqualTimesAreOrderedByInsertion) {
  // Two runs of the same graph order ties identically: compare complete traces.
  auto build_and_run = [] {
    EventEngine e;
    const StreamId s = e.add_stream("s");
    std::vector<TaskId> ids;
    for (int i = 0; i < 50; ++i) ids.push_back(e.add_task(i % 3, {e.add_stream("x" + std::to_string(i))}));
    const TaskId tail = e.add_task(1, {s});
    for (TaskId t : ids) e.add_dependency(t, tail);
    e.run();
    std::vector<SimTime> starts;
    for (TaskId t = 0; t <= tail; ++t) starts.push_back(e.start(t));
    return starts;
  };
  EXPECT_EQ(build_and_run(), build_and_run());
}

TEST(EventEngine, ACycleIsReportedNotHung) {
  EventEngine e;
  const StreamId s = e.add_stream("s");
  const TaskId a = e.add_task(1, {s});
  const TaskId b = e.add_task(1, {s});
  e.add_dependency(b, a);  // a is first on the stream but waits for b: impossible
  EXPECT_THROW(e.run(), std::logic_error);
}

}  // namespace
}  // namespace cc
