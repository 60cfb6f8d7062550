// host_recorder.h — the CPU backend's profiler: times every annotated engine scope with the
// monotonic host clock. Scopes nest (a collective inside the optimizer step, every op inside
// a "train_step"), so each event keeps both its duration and its self time — the duration
// minus the scopes inside it — and self times add up to the step without double counting.
// The CUDA backend implements the same engine::OpRecorder interface with CUPTI.
#pragma once

#include <chrono>
#include <vector>

#include "engine/annotations.h"

namespace cc::profiler {

// The annotation that brackets one training iteration (engine/trainer.cpp); shape[0] is
// the step number.
inline constexpr const char* kStepScope = "train_step";

struct RecordedOp {
  engine::OpAnnotation op;  // names are string literals of the engine: safe to keep
  long step = -1;           // the train_step it ran in; -1 outside any step
  double start_s = 0;       // since the recorder was created
  double duration_s = 0;
  double self_s = 0;        // duration minus nested scopes
  // Host time of the scope's own code (minus nested scopes and waits for the device), where
  // self_s is device time (the CUDA recorder); 0 on the CPU backend, whose self_s is host time.
  double host_self_s = 0;
};

class HostRecorder final : public engine::OpRecorder {
 public:
  HostRecorder();
  void begin(const engine::OpAnnotation& op) override;
  void end(const engine::OpAnnotation& op) override;
  const std::vector<RecordedOp>& events() const { return events_; }

 private:
  struct Open {
    engine::OpAnnotation op;
    double start_s;
    double nested_s = 0;
  };
  double now() const;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Open> open_;
  std::vector<RecordedOp> events_;
  long step_ = -1;
};

// Installs a recorder as the engine's active one for a scope, and removes it after.
class RecorderInstalled {
 public:
  explicit RecorderInstalled(engine::OpRecorder& r) { engine::active_recorder() = &r; }
  ~RecorderInstalled() { engine::active_recorder() = nullptr; }
  RecorderInstalled(const RecorderInstalled&) = delete;
  RecorderInstalled& operator=(const RecorderInstalled&) = delete;
};

}  // namespace cc::profiler
