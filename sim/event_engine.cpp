#include "sim/event_engine.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace cc {

StreamId EventEngine::add_stream(std::string name) {
  streams_.push_back({std::move(name), {}, 0});
  return static_cast<StreamId>(streams_.size() - 1);
}

TaskId EventEngine::add_task(SimTime duration, std::initializer_list<StreamId> streams) {
  return add_task(duration, std::vector<StreamId>(streams));
}

TaskId EventEngine::add_task(SimTime duration, const std::vector<StreamId>& streams) {
  const auto id = static_cast<TaskId>(tasks_.size());
  Task t;
  t.duration = duration;
  t.streams_begin = static_cast<std::int32_t>(task_streams_.size());
  for (StreamId s : streams) {
    auto& queue = streams_[static_cast<std::size_t>(s)].tasks;
    task_streams_.push_back(s);
    stream_predecessor_.push_back(queue.empty() ? -1 : queue.back());
    queue.push_back(id);
  }
  t.streams_end = static_cast<std::int32_t>(task_streams_.size());
  tasks_.push_back(t);
  return id;
}

void EventEngine::add_dependency(TaskId before, TaskId after) { edges_.emplace_back(before, after); }

TaskId EventEngine::waited_for(TaskId t) const {
  TaskId best = -1;
  auto consider = [&](TaskId p) {
    if (p >= 0 && (best < 0 || end(p) > end(best))) best = p;
  };
  for (auto i = pred_begin_[static_cast<std::size_t>(t)]; i < pred_begin_[static_cast<std::size_t>(t) + 1]; ++i)
    consider(pred_[static_cast<std::size_t>(i)]);
  const Task& task = tasks_[static_cast<std::size_t>(t)];
  for (auto i = task.streams_begin; i < task.streams_end; ++i) consider(stream_predecessor_[static_cast<std::size_t>(i)]);
  return best;
}

void EventEngine::try_start(TaskId id, SimTime now) {
  Task& t = tasks_[static_cast<std::size_t>(id)];
  if (t.start >= 0 || t.waiting > 0) return;
  for (auto i = t.streams_begin; i < t.streams_end; ++i) {
    const Stream& s = streams_[static_cast<std::size_t>(task_streams_[static_cast<std::size_t>(i)])];
    if (s.head >= s.tasks.size() || s.tasks[s.head] != id) return;
  }
  t.start = now;
  heap_.push_back({now + t.duration, next_event_id_++, id});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void EventEngine::run() {
  // Build successor and predecessor lists (CSR) once, then simulate.
  const std::size_t n = tasks_.size();
  succ_begin_.assign(n + 1, 0);
  pred_begin_.assign(n + 1, 0);
  for (const auto& [a, b] : edges_) {
    ++succ_begin_[static_cast<std::size_t>(a) + 1];
    ++pred_begin_[static_cast<std::size_t>(b) + 1];
    ++tasks_[static_cast<std::size_t>(b)].waiting;
  }
  for (std::size_t i = 0; i < n; ++i) {
    succ_begin_[i + 1] += succ_begin_[i];
    pred_begin_[i + 1] += pred_begin_[i];
  }
  succ_.resize(edges_.size());
  pred_.resize(edges_.size());
  {
    std::vector<std::int32_t> sfill(succ_begin_.begin(), succ_begin_.end() - 1);
    std::vector<std::int32_t> pfill(pred_begin_.begin(), pred_begin_.end() - 1);
    for (const auto& [a, b] : edges_) {
      succ_[static_cast<std::size_t>(sfill[static_cast<std::size_t>(a)]++)] = b;
      pred_[static_cast<std::size_t>(pfill[static_cast<std::size_t>(b)]++)] = a;
    }
  }

  for (TaskId t = 0; t < static_cast<TaskId>(n); ++t) try_start(t, 0);
  std::size_t finished = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Event e = heap_.back();
    heap_.pop_back();
    ++events_;
    ++finished;
    makespan_ = std::max(makespan_, e.time);
    const Task& t = tasks_[static_cast<std::size_t>(e.task)];
    // Free the streams, then wake what now heads them and what depended on this task.
    for (auto i = t.streams_begin; i < t.streams_end; ++i) {
      Stream& s = streams_[static_cast<std::size_t>(task_streams_[static_cast<std::size_t>(i)])];
      ++s.head;
      if (s.head < s.tasks.size()) try_start(s.tasks[s.head], e.time);
    }
    for (auto i = succ_begin_[static_cast<std::size_t>(e.task)]; i < succ_begin_[static_cast<std::size_t>(e.task) + 1];
         ++i) {
      const TaskId s = succ_[static_cast<std::size_t>(i)];
      if (--tasks_[static_cast<std::size_t>(s)].waiting == 0) try_start(s, e.time);
    }
  }
  if (finished != n)
    throw std::logic_error(fmt::format("event engine: {} of {} tasks never started (dependency cycle or "
                                       "stream order contradicting a dependency)",
                                       n - finished, n));
}

}  // namespace cc
