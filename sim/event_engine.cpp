#include "sim/event_engine.h"

#include <algorithm>
#include <cmath>
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

LinkId EventEngine::add_link(std::string name) {
  links_.push_back({std::move(name), {}});
  return static_cast<LinkId>(links_.size() - 1);
}

void EventEngine::use_links(TaskId task, SimTime link_time, const std::vector<LinkId>& links) {
  Task& t = tasks_[static_cast<std::size_t>(task)];
  if (link_time < 0 || link_time > t.duration)
    throw std::logic_error(fmt::format("event engine: task {} uses links for {} ns of its {} ns", task, link_time,
                                       t.duration));
  t.link_time = link_time;
  t.links_begin = static_cast<std::int32_t>(task_links_.size());
  for (LinkId l : links)  // a link named twice is one link
    if (std::find(task_links_.begin() + t.links_begin, task_links_.end(), l) == task_links_.end()) task_links_.push_back(l);
  t.links_end = static_cast<std::int32_t>(task_links_.size());
}

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
  if (!t.on_links()) {
    push(now + t.duration, id, EventKind::Finish);
  } else if (t.duration > t.link_time) {
    push(now + t.duration - t.link_time, id, EventKind::JoinLinks);
  } else {
    join_links(id, now);
  }
}

void EventEngine::push(SimTime time, TaskId task, EventKind kind) {
  heap_.push_back({time, next_event_id_++, task, kind, tasks_[static_cast<std::size_t>(task)].version});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void EventEngine::join_links(TaskId id, SimTime now) {
  Task& t = tasks_[static_cast<std::size_t>(id)];
  progress_[static_cast<std::size_t>(id)] = {static_cast<double>(t.link_time), 0.0, now};
  bool alone = true;
  for (auto i = t.links_begin; i < t.links_end; ++i) {
    auto& active = links_[static_cast<std::size_t>(task_links_[static_cast<std::size_t>(i)])].active;
    active.push_back(id);
    alone = alone && active.size() == 1;
  }
  if (!alone) return share_bandwidth(id, now);
  progress_[static_cast<std::size_t>(id)].rate = 1.0;  // the common case: nobody to share with
  push(now + t.link_time, id, EventKind::Finish);
}

void EventEngine::leave_links(TaskId id, SimTime now) {
  const Task& t = tasks_[static_cast<std::size_t>(id)];
  bool others = false;
  for (auto i = t.links_begin; i < t.links_end; ++i) {
    auto& active = links_[static_cast<std::size_t>(task_links_[static_cast<std::size_t>(i)])].active;
    active.erase(std::find(active.begin(), active.end(), id));
    others = others || !active.empty();
  }
  if (others) share_bandwidth(id, now);
}

// Max-min fair rates over the links and tasks a change reaches (its connected component:
// nothing outside it can change), by progressive filling: the link that offers the smallest
// equal share fixes that share for the tasks still unrated on it; their use is taken off their
// other links; repeat. Links are visited in a fixed order, so ties resolve identically.
void EventEngine::share_bandwidth(TaskId changed, SimTime now) {
  if (link_seen_.size() < links_.size()) link_seen_.resize(links_.size(), 0);
  if (task_seen_.size() < tasks_.size()) task_seen_.resize(tasks_.size(), 0);
  capacity_left_.resize(links_.size());
  unrated_.resize(links_.size());
  ++epoch_;
  component_links_.clear();
  component_tasks_.clear();
  const Task& origin = tasks_[static_cast<std::size_t>(changed)];
  for (auto i = origin.links_begin; i < origin.links_end; ++i) {
    const LinkId l = task_links_[static_cast<std::size_t>(i)];
    if (link_seen_[static_cast<std::size_t>(l)] != epoch_) {
      link_seen_[static_cast<std::size_t>(l)] = epoch_;
      component_links_.push_back(l);
    }
  }
  for (std::size_t k = 0; k < component_links_.size(); ++k)
    for (TaskId a : links_[static_cast<std::size_t>(component_links_[k])].active) {
      if (task_seen_[static_cast<std::size_t>(a)] == epoch_) continue;
      task_seen_[static_cast<std::size_t>(a)] = epoch_;
      component_tasks_.push_back(a);
      const Task& t = tasks_[static_cast<std::size_t>(a)];
      for (auto i = t.links_begin; i < t.links_end; ++i) {
        const LinkId l = task_links_[static_cast<std::size_t>(i)];
        if (link_seen_[static_cast<std::size_t>(l)] != epoch_) {
          link_seen_[static_cast<std::size_t>(l)] = epoch_;
          component_links_.push_back(l);
        }
      }
    }
  // Bring every task's progress up to now at its old rate, then rate them afresh.
  for (TaskId a : component_tasks_) {
    LinkProgress& p = progress_[static_cast<std::size_t>(a)];
    p.remaining = std::max(0.0, p.remaining - static_cast<double>(now - p.rated_at) * p.rate);
    p.rated_at = now;
    p.rate = 0;
  }
  for (LinkId l : component_links_) {
    capacity_left_[static_cast<std::size_t>(l)] = 1.0;
    unrated_[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(links_[static_cast<std::size_t>(l)].active.size());
  }
  std::size_t left = component_tasks_.size();
  while (left > 0) {
    LinkId bottleneck = -1;
    double share = 0;
    for (LinkId l : component_links_) {
      const auto n = unrated_[static_cast<std::size_t>(l)];
      if (n == 0) continue;
      const double s = capacity_left_[static_cast<std::size_t>(l)] / n;
      if (bottleneck < 0 || s < share) bottleneck = l, share = s;
    }
    share = std::max(share, 1e-12);  // rounding can leave a link a hair below its users' due
    for (TaskId a : links_[static_cast<std::size_t>(bottleneck)].active) {
      const Task& t = tasks_[static_cast<std::size_t>(a)];
      LinkProgress& p = progress_[static_cast<std::size_t>(a)];
      if (p.rate > 0) continue;
      p.rate = share;
      --left;
      for (auto i = t.links_begin; i < t.links_end; ++i) {
        const auto l = static_cast<std::size_t>(task_links_[static_cast<std::size_t>(i)]);
        capacity_left_[l] -= share;
        --unrated_[l];
      }
    }
  }
  // New finish times; the events of the old rates go stale. The small allowance keeps a share
  // of 1/3 (which doubles store a hair low) from adding a nanosecond to an exact finish.
  for (TaskId a : component_tasks_) {
    const LinkProgress& p = progress_[static_cast<std::size_t>(a)];
    ++tasks_[static_cast<std::size_t>(a)].version;
    push(now + static_cast<SimTime>(std::ceil(p.remaining / p.rate - 1e-6)), a, EventKind::Finish);
  }
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

  if (!task_links_.empty()) progress_.assign(n, {});
  for (TaskId t = 0; t < static_cast<TaskId>(n); ++t) try_start(t, 0);
  std::size_t finished = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Event e = heap_.back();
    heap_.pop_back();
    Task& t = tasks_[static_cast<std::size_t>(e.task)];
    if (e.version != t.version) continue;  // a finish superseded when its link shares changed
    ++events_;
    if (e.kind == EventKind::JoinLinks) {
      join_links(e.task, e.time);
      continue;
    }
    if (t.on_links()) leave_links(e.task, e.time);
    t.end = e.time;
    ++finished;
    makespan_ = std::max(makespan_, e.time);
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
