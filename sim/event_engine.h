// event_engine.h — a small discrete-event engine over a task graph. Tasks have an integer
// duration, dependencies, and the in-order streams they occupy (a GPU's compute stream, a
// communication stream, a network port): like CUDA streams, a stream runs its tasks in the
// order they were added, one at a time. A task spanning several streams (a collective
// over a group) starts when it heads all of them and its dependencies are done.
// Events are ordered by (time, insertion id), so every run orders ties identically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/units.h"

namespace cc {

using TaskId = std::int32_t;
using StreamId = std::int32_t;

class EventEngine {
 public:
  StreamId add_stream(std::string name);
  // Streams are listed in the order the task takes them; the task joins each stream's queue.
  TaskId add_task(SimTime duration, std::initializer_list<StreamId> streams);
  TaskId add_task(SimTime duration, const std::vector<StreamId>& streams);
  void add_dependency(TaskId before, TaskId after);
  void set_duration(TaskId task, SimTime duration) { tasks_[static_cast<std::size_t>(task)].duration = duration; }

  // Runs every task. Throws std::logic_error if some task can never start (a cycle, or
  // stream orders that contradict dependencies) — ns-3's end-of-run check.
  void run();

  SimTime start(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].start; }
  SimTime end(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].start + tasks_[static_cast<std::size_t>(t)].duration; }
  SimTime duration(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].duration; }
  // What `t` waited for: of its dependencies and its predecessors on its streams, the one
  // that finished last (-1 if none). Following this chain backwards explains idle time.
  TaskId waited_for(TaskId t) const;
  const std::vector<TaskId>& stream_tasks(StreamId s) const { return streams_[static_cast<std::size_t>(s)].tasks; }
  const std::string& stream_name(StreamId s) const { return streams_[static_cast<std::size_t>(s)].name; }
  std::size_t task_count() const { return tasks_.size(); }
  std::size_t stream_count() const { return streams_.size(); }
  std::uint64_t events_processed() const { return events_; }
  SimTime makespan() const { return makespan_; }

 private:
  struct Task {
    SimTime duration = 0;
    SimTime start = -1;
    std::int32_t waiting = 0;  // unfinished dependencies
    std::int32_t streams_begin = 0, streams_end = 0;  // range in task_streams_
  };
  struct Stream {
    std::string name;
    std::vector<TaskId> tasks;
    std::size_t head = 0;
  };
  void try_start(TaskId t, SimTime now);

  std::vector<Task> tasks_;
  std::vector<StreamId> task_streams_;
  std::vector<TaskId> stream_predecessor_;  // parallel to task_streams_: previous task on that stream
  std::vector<Stream> streams_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
  std::vector<std::int32_t> succ_begin_;  // CSR successors, built by run()
  std::vector<TaskId> succ_;
  std::vector<std::int32_t> pred_begin_;
  std::vector<TaskId> pred_;
  struct Event {
    SimTime time;
    std::uint64_t id;
    TaskId task;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : id > o.id; }
  };
  std::vector<Event> heap_;
  std::uint64_t next_event_id_ = 0;
  std::uint64_t events_ = 0;
  SimTime makespan_ = 0;
};

}  // namespace cc
