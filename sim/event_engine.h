// event_engine.h — a small discrete-event engine over a task graph. Tasks have an integer
// duration, dependencies, and the in-order streams they occupy (a GPU's compute stream, a
// communication stream): like CUDA streams, a stream runs its tasks in the order they were
// added, one at a time. A task spanning several streams (a collective over a group) starts
// when it heads all of them and its dependencies are done.
//
// Links (one direction of a NIC or of a GPU's NVLink port) are shared, not queued: a task may
// move data over links for the last part of its duration, and the tasks on a link at one time
// divide its bandwidth — SimGrid's flow-level network model: max-min fair shares, solved by
// progressive filling (its CM02 model; LV08 adds TCP corrections — latency x13.01, 97% of the
// bandwidth, ACK cross-traffic — that NCCL-priced link times already hold or do not need;
// simgrid.org/doc/latest/Models.html). Each link's capacity is 1: a task's
// link time is what it takes alone, so one task alone is unchanged, and k equal tasks on one
// link each progress at 1/k. Rates are solved again, over the links the change touches,
// whenever a task joins or leaves a link.
//
// Events are ordered by (time, insertion id), so every run orders ties identically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/units.h"

namespace cc {

using TaskId = std::int32_t;
using StreamId = std::int32_t;
using LinkId = std::int32_t;

class EventEngine {
 public:
  StreamId add_stream(std::string name);
  // Streams are listed in the order the task takes them; the task joins each stream's queue.
  TaskId add_task(SimTime duration, std::initializer_list<StreamId> streams);
  TaskId add_task(SimTime duration, const std::vector<StreamId>& streams);
  void add_dependency(TaskId before, TaskId after);
  void set_duration(TaskId task, SimTime duration) { tasks_[static_cast<std::size_t>(task)].duration = duration; }

  LinkId add_link(std::string name);
  // The last `link_time` of `task`'s duration (at most all of it) moves data over `links`,
  // taking `link_time` when it has them to itself. What comes before runs at its own pace: a
  // transfer's latency, or a pass's compute ahead of its communication.
  void use_links(TaskId task, SimTime link_time, const std::vector<LinkId>& links);

  // Runs every task. Throws std::logic_error if some task can never start (a cycle, or
  // stream orders that contradict dependencies) — ns-3's end-of-run check.
  void run();

  SimTime start(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].start; }
  SimTime end(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].end; }
  // As it ran: longer than duration_alone() when it shared a link.
  SimTime duration(TaskId t) const { return end(t) - start(t); }
  SimTime duration_alone(TaskId t) const { return tasks_[static_cast<std::size_t>(t)].duration; }
  // What `t` waited for: of its dependencies and its predecessors on its streams, the one
  // that finished last (-1 if none). Following this chain backwards explains idle time.
  TaskId waited_for(TaskId t) const;
  const std::vector<TaskId>& stream_tasks(StreamId s) const { return streams_[static_cast<std::size_t>(s)].tasks; }
  const std::string& stream_name(StreamId s) const { return streams_[static_cast<std::size_t>(s)].name; }
  const std::string& link_name(LinkId l) const { return links_[static_cast<std::size_t>(l)].name; }
  std::size_t task_count() const { return tasks_.size(); }
  std::size_t stream_count() const { return streams_.size(); }
  std::size_t link_count() const { return links_.size(); }
  std::uint64_t events_processed() const { return events_; }
  SimTime makespan() const { return makespan_; }

 private:
  struct Task {
    SimTime duration = 0;  // alone
    SimTime start = -1, end = -1;
    std::int32_t waiting = 0;  // unfinished dependencies
    std::int32_t streams_begin = 0, streams_end = 0;  // range in task_streams_
    // Link use: the last link_time of duration, over task_links_[links_begin, links_end).
    SimTime link_time = 0;
    std::int32_t links_begin = 0, links_end = 0;
    std::uint32_t version = 0;  // a finish event of an older version was superseded by a new rate
    bool on_links() const { return link_time > 0 && links_end > links_begin; }
  };
  // A task's progress while on its links: link time left (ns at full rate), the share it
  // progresses at, since when. Apart from Task, which the loop over every task reads.
  struct LinkProgress {
    double remaining = 0, rate = 0;
    SimTime rated_at = 0;
  };
  struct Stream {
    std::string name;
    std::vector<TaskId> tasks;
    std::size_t head = 0;
  };
  struct Link {
    std::string name;
    std::vector<TaskId> active;  // tasks moving data over it now, in the order they joined
  };
  enum class EventKind : std::uint8_t { Finish, JoinLinks };
  struct Event {
    SimTime time;
    std::uint64_t id;
    TaskId task;
    EventKind kind;
    std::uint32_t version;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : id > o.id; }
  };
  void try_start(TaskId t, SimTime now);
  void push(SimTime time, TaskId task, EventKind kind);
  void join_links(TaskId t, SimTime now);
  void leave_links(TaskId t, SimTime now);
  void share_bandwidth(TaskId changed, SimTime now);

  std::vector<Task> tasks_;
  std::vector<LinkProgress> progress_;  // per task, sized by run() when any task uses links
  std::vector<StreamId> task_streams_;
  std::vector<TaskId> stream_predecessor_;  // parallel to task_streams_: previous task on that stream
  std::vector<Stream> streams_;
  std::vector<LinkId> task_links_;
  std::vector<Link> links_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
  std::vector<std::int32_t> succ_begin_;  // CSR successors, built by run()
  std::vector<TaskId> succ_;
  std::vector<std::int32_t> pred_begin_;
  std::vector<TaskId> pred_;
  // Scratch of share_bandwidth(): the component of links and tasks a change reaches.
  std::vector<std::uint32_t> link_seen_, task_seen_;
  std::uint32_t epoch_ = 0;
  std::vector<LinkId> component_links_;
  std::vector<TaskId> component_tasks_;
  std::vector<double> capacity_left_;
  std::vector<std::int32_t> unrated_;
  std::vector<Event> heap_;
  std::uint64_t next_event_id_ = 0;
  std::uint64_t events_ = 0;
  SimTime makespan_ = 0;
};

}  // namespace cc
