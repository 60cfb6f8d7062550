#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "reference_data.h"
#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/presets.h"
#include "sim/search.h"

namespace cc {
namespace {

bool same_layout(const ParallelConfig& a, const ParallelConfig& b) {
  return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.sequence_parallel == b.sequence_parallel &&
         a.micro_batch == b.micro_batch && a.virtual_stages == b.virtual_stages && a.recompute == b.recompute &&
         a.distributed_optimizer == b.distributed_optimizer &&
         (a.recompute != RecomputeGranularity::Full ||
          (a.recompute_method == b.recompute_method && a.recompute_num_layers == b.recompute_num_layers));
}

SearchRequest request(const char* model, const char* cluster, int gpus, int batch) {
  SearchRequest r;
  r.model = load_model(model);
  r.cluster = load_cluster(cluster);
  r.gpus = gpus;
  r.global_batch = batch;
  return r;
}

// The message search() refuses `r` with (a SpecError); empty when it does not refuse.
std::string refusal(const SearchRequest& r) {
  try {
    search(r);
  } catch (const SpecError& e) {
    return e.what();
  }
  return {};
}

TEST(Search, PaperLayoutsRankAmongTheBestAndNothingBeatsTheBestFound) {
  // Issue acceptance: for Korthikanti's four models at the paper's GPU counts and batches,
  // the paper's layout is in the top 10 — except the 22B case, where a 4-sequence batch
  // on 8 GPUs admits faster layouts that skip recomputation (docs/cli.md, "search"); there it
  // must still rank, within the top 20.
  for (const auto& run : test::korthikanti_runs()) {
    if (run.config.recompute != RecomputeGranularity::Selective) continue;
    SearchRequest r = request(run.model_preset.c_str(), "dgx-a100-80gb", run.config.gpus(), run.config.global_batch);
    r.top = 20;
    const SearchOutcome out = search(r);
    const auto it = std::find_if(out.ranked.begin(), out.ranked.end(),
                                 [&](const RankedLayout& x) { return same_layout(x.result.config, run.config); });
    ASSERT_NE(it, out.ranked.end()) << run.model_preset << ": the paper's layout is not in the top 20";
    const long rank = it - out.ranked.begin() + 1;
    EXPECT_LE(rank, run.model_preset == "gpt-22b" ? 20 : 10) << run.model_preset;
    const double paper_layout = simulate(r.model, r.cluster, run.config, AnalyticCosts(r.cluster, Precision::BF16))
                                    .iteration_time_s;
    EXPECT_LE(out.ranked.front().result.iteration_time_s, paper_layout) << run.model_preset;
  }
}

TEST(Search, PruningKeepsExactlyTheTopThatExhaustiveSimulationFinds) {
  // Simulate every fitting layout of a small problem and compare with the pruned search.
  SearchRequest r = request("gpt3-1.3b", "dgx-a100-40gb", 32, 256);
  r.space.micro_batch = {1, 2, 4};
  r.top = 15;
  const SearchOutcome pruned = search(r);
  SearchRequest all = r;
  all.top = 1'000'000;  // admits every fitting layout to simulation
  const SearchOutcome exhaustive = search(all);
  ASSERT_EQ(exhaustive.simulated, exhaustive.fitting);
  ASSERT_LT(pruned.simulated, exhaustive.simulated);
  for (std::size_t i = 0; i < pruned.ranked.size(); ++i) {
    EXPECT_TRUE(same_layout(pruned.ranked[i].result.config, exhaustive.ranked[i].result.config)) << "rank " << i + 1;
    EXPECT_EQ(pruned.ranked[i].result.iteration_time_s, exhaustive.ranked[i].result.iteration_time_s);
  }
}

TEST(Search, EstimateStaysCloseToTheSimulatorWhereItMatters) {
  // The admission margin (12%) rests on this: on every fitting layout that simulates
  // within 1.5x of the best, the estimate is within 6% of the simulator. (It errs high, by
  // up to ~17%, only on bubble-bound layouts with about as many microbatches as stages,
  // which are 2-6x slower than the best and never near the top.)
  for (auto [model, cluster, gpus, batch] : {std::tuple{"gpt3-175b", "dgx-a100-80gb", 512, 1024},
                                             std::tuple{"llama3-70b", "dgx-h100", 128, 256},
                                             std::tuple{"gpt3-1.3b", "dgx-a100-40gb", 32, 256}}) {
    SearchRequest r = request(model, cluster, gpus, batch);
    r.space.micro_batch = {1, 2, 4};
    r.top = 1'000'000;
    const SearchOutcome out = search(r);
    const double best = out.ranked.front().result.iteration_time_s;
    double worst = 0;
    std::size_t counted = 0;
    for (const auto& x : out.ranked) {
      if (x.result.iteration_time_s > 1.5 * best) continue;
      ++counted;
      worst = std::max(worst, std::fabs(x.estimate_s - x.result.iteration_time_s) / x.result.iteration_time_s);
    }
    EXPECT_GT(counted, 50u) << model;
    EXPECT_LT(worst, 0.06) << model;
  }
}

TEST(Search, AnswerDoesNotDependOnThreadCount) {
  SearchRequest r = request("gpt3-175b", "dgx-a100-80gb", 256, 512);
  r.top = 25;
  r.threads = 1;
  const SearchOutcome one = search(r);
  for (int threads : {2, 5}) {
    r.threads = threads;
    const SearchOutcome many = search(r);
    ASSERT_EQ(one.ranked.size(), many.ranked.size());
    EXPECT_EQ(one.enumerated, many.enumerated);
    EXPECT_EQ(one.simulated, many.simulated);
    for (std::size_t i = 0; i < one.ranked.size(); ++i) {
      EXPECT_TRUE(same_layout(one.ranked[i].result.config, many.ranked[i].result.config));
      EXPECT_EQ(one.ranked[i].result.iteration_time_s, many.ranked[i].result.iteration_time_s);
    }
  }
}

TEST(Search, TiesAreMarkedWithinTheTolerance) {
  SearchRequest r = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536);
  r.top = 30;
  const SearchOutcome out = search(r);
  const double best = out.ranked.front().result.iteration_time_s;
  for (const auto& x : out.ranked) EXPECT_EQ(x.tied, x.result.iteration_time_s <= best * 1.03);
  EXPECT_TRUE(out.ranked.front().tied);
  EXPECT_FALSE(out.ranked.back().tied);  // 30 layouts do not all sit within 3%
  for (const auto& x : out.ranked) EXPECT_TRUE(x.result.fits);
}

TEST(Search, LeavesTheStatedHeadroomFree) {
  SearchRequest r = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536);
  r.top = 50;
  for (const auto& x : search(r).ranked) EXPECT_LE(x.result.peak_memory_gib, 80 * 0.95);
}

TEST(Search, PinnedValuesAreHonoured) {
  SearchRequest r = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536);
  r.space.tp = {4};
  r.space.pp = {8, 16};
  r.space.recompute = {RecomputeGranularity::Full};
  r.space.recompute_method = {RecomputeMethod::Uniform};
  for (const auto& x : search(r).ranked) {
    EXPECT_EQ(x.result.config.tp, 4);
    EXPECT_TRUE(x.result.config.pp == 8 || x.result.config.pp == 16);
    EXPECT_EQ(x.result.config.recompute, RecomputeGranularity::Full);
  }
}

TEST(Search, UnevenSplitsLetLlama405BUseSixteenStages) {
  // 126 layers do not divide over 16 stages: every ranked layout splits them one of
  // Megatron-Core's uneven ways, 7 + 14 x 8 + 7 or 126 + embedding + loss = 16 x 8.
  SearchRequest r = request("llama3-405b", "dgx-h100", 16384, 2048);
  r.space.tp = {8};
  r.space.pp = {16};
  r.space.attention = AttentionKernel::Flash;
  const SearchOutcome out = search(r);
  ASSERT_FALSE(out.ranked.empty());
  for (const auto& x : out.ranked) {
    const ParallelConfig& c = x.result.config;
    const bool ends = c.first_stage_layers == 7 && c.last_stage_layers == 7 && !c.account_for_embedding;
    const bool counted = c.account_for_embedding && c.account_for_loss && c.first_stage_layers == 0;
    EXPECT_TRUE(ends != counted) << c.summary();
  }
  // Counting the embedding and loss is what lets the stages interleave (8 layers a stage).
  EXPECT_TRUE(out.ranked.front().result.config.account_for_embedding) << out.ranked.front().result.config.summary();
}

TEST(Search, OddEndsLetDeepSeekV3SplitItsSixtyOneLayers) {
  // 61 layers over PP 16: 14 middle stages of 4 leave 5 for the two ends, which split 2 + 3 or
  // 3 + 2 (61 + embedding + loss = 63 does not divide either). Both orders are tried.
  SearchRequest r = request("deepseek-v3", "dgx-h100", 2048, 2048);
  r.space.tp = {1};
  r.space.pp = {16};
  r.space.cp = {1};
  r.space.ep = {64};
  r.space.attention = AttentionKernel::Flash;  // MLA is priced with flash attention only
  r.space.micro_batch = {1};
  r.space.virtual_stages = {1};
  r.space.recompute = {RecomputeGranularity::Full};
  r.space.recompute_method = {RecomputeMethod::Uniform};
  r.top = 100;
  const SearchOutcome out = search(r);
  ASSERT_FALSE(out.ranked.empty());
  std::set<std::pair<int, int>> ends;
  for (const auto& x : out.ranked) {
    const ParallelConfig& c = x.result.config;
    EXPECT_EQ(c.first_stage_layers + 14 * 4 + c.last_stage_layers, 61) << c.summary();
    ends.insert({c.first_stage_layers, c.last_stage_layers});
  }
  EXPECT_EQ(ends, (std::set<std::pair<int, int>>{{2, 3}, {3, 2}}));
}

TEST(Search, ImpossibleRequestsSayWhy) {
  SearchRequest r = request("gpt3-175b", "dgx-a100-40gb", 16, 64);
  const std::string m = refusal(r);  // 175B on 16 x 40 GB cannot fit
  EXPECT_NE(m.find("no layout of gpt3-175b fits"), std::string::npos) << m;
  EXPECT_NE(m.find("GiB more"), std::string::npos) << m;
  r = request("gpt3-175b", "dgx-a100-80gb", 1024, 1536);
  r.space.tp = {7};  // does not divide 96 heads
  EXPECT_NE(refusal(r).find("no valid layout"), std::string::npos) << refusal(r);
}

}  // namespace
}  // namespace cc

namespace cc {
namespace {

TEST(Search, CancelStopsTheSearchWithinALayout) {
  // The full GPT-3 175B space takes ~0.2 s; cancelled from the first progress report it must
  // stop after the layout it holds, not finish the phase or start the next. One thread makes
  // that exact: with more, how many layouts the others finished by the first report depends on
  // scheduling.
  for (const int threads : {1, 2}) {
    SearchRequest r;
    r.model = load_model("gpt3-175b");
    r.cluster = load_cluster("dgx-a100-80gb");
    r.gpus = 1024;
    r.global_batch = 1536;
    r.threads = threads;
    std::atomic<bool> cancel{false};
    r.cancel = &cancel;
    std::size_t reported = 0, last_done = 0, total = 0;
    EXPECT_THROW(search(r,
                        [&](std::size_t done, std::size_t n, const char*) {
                          ++reported;
                          last_done = done;
                          total = n;
                          cancel.store(true);
                        }),
                 SearchCancelled);
    EXPECT_EQ(reported, 1u) << threads << " threads";  // nothing after the cancel: no phase completed
    EXPECT_GT(total, 256u);                             // a phase long enough to report twice uncancelled
    if (threads == 1) {
      EXPECT_EQ(last_done, 1u);  // reported after its first layout
    }
  }
}

}  // namespace
}  // namespace cc

namespace cc {
namespace {

// A problem where many layouts are refused for memory: GPT-3 175B on 64 A100s of 80 GB.
SearchRequest memory_bound_request() {
  SearchRequest r = request("gpt3-175b", "dgx-a100-80gb", 64, 128);
  r.space.micro_batch = {1, 2};
  r.top = 10;
  return r;
}

TEST(Search, UnfitLayoutsAreTheFastestOfThoseRefusedForMemoryAndChangeNothingElse) {
  SearchRequest r = memory_bound_request();
  const SearchOutcome plain = search(r);
  EXPECT_TRUE(plain.unfit.empty()) << "the CLI asks for no unfit layouts and gets none";
  r.unfit = 12;
  const SearchOutcome shown = search(r);
  const std::size_t refused = shown.excluded.at("does not fit in memory");
  ASSERT_GT(refused, 12u) << "the test needs more refusals than it asks to see";
  ASSERT_EQ(shown.unfit.size(), 12u);
  // The counts are those of the search without them: fitting and refused make up the valid.
  EXPECT_EQ(shown.fitting + refused, shown.valid);
  EXPECT_EQ(shown.enumerated, plain.enumerated);
  EXPECT_EQ(shown.valid, plain.valid);
  EXPECT_EQ(shown.fitting, plain.fitting);
  EXPECT_EQ(shown.simulated, plain.simulated);
  EXPECT_EQ(shown.excluded, plain.excluded);
  ASSERT_EQ(shown.ranked.size(), plain.ranked.size());
  for (std::size_t i = 0; i < plain.ranked.size(); ++i) {
    EXPECT_TRUE(same_layout(shown.ranked[i].result.config, plain.ranked[i].result.config)) << "rank " << i + 1;
    EXPECT_EQ(shown.ranked[i].result.iteration_time_s, plain.ranked[i].result.iteration_time_s);
  }
  // Every one was simulated, does not fit, and none is tied; fastest first.
  for (std::size_t i = 0; i < shown.unfit.size(); ++i) {
    const RankedLayout& u = shown.unfit[i];
    EXPECT_FALSE(u.result.fits);
    EXPECT_GT(u.result.peak_memory_gib, u.result.usable_gib);
    EXPECT_GT(u.result.iteration_time_s, 0.0);
    EXPECT_FALSE(u.tied);
    if (i > 0) {
      EXPECT_LE(shown.unfit[i - 1].result.iteration_time_s, u.result.iteration_time_s);
    }
  }
  // They are the 12 best estimates among the refused layouts within twice the usable memory.
  r.unfit = 1'000'000;
  const SearchOutcome near = search(r);
  ASSERT_GE(near.unfit.size(), 12u);
  std::vector<double> estimates;
  for (const auto& u : near.unfit) {
    EXPECT_LE(u.result.peak_memory_gib, 2 * u.result.usable_gib);
    estimates.push_back(u.estimate_s);
  }
  std::sort(estimates.begin(), estimates.end());
  for (const auto& u : shown.unfit) EXPECT_LE(u.estimate_s, estimates[11]);
  // With no memory bound every refused layout is a candidate.
  r.unfit_within = std::numeric_limits<double>::infinity();
  const SearchOutcome all = search(r);
  EXPECT_EQ(all.unfit.size(), refused);
  EXPECT_GT(all.unfit.size(), near.unfit.size());
}

TEST(Search, AnErrorInAWorkerThreadReachesTheCaller) {
  // FP8 on A100s (no FP8 tensor cores) is refused while pricing, on the worker threads: the
  // refusal must come back as the SpecError, not std::terminate.
  SearchRequest r = request("gpt3-13b", "dgx-a100-80gb", 64, 512);
  r.space.precision = Precision::FP8;
  r.threads = 4;
  EXPECT_NE(refusal(r).find("precision fp8 is not supported"), std::string::npos) << refusal(r);
}

TEST(Search, TpTimesPpBeyondTwoToThe31IsRefusedNotACrash) {
  // 65,536 GPUs with PP 65,536 pinned: TP 65,536 x PP 65,536 = 2^32 wrapped a 32-bit product
  // to 0 and the divisibility check died of SIGFPE. 405B has 126 layers, so no PP 65,536
  // layout divides; the search must say so.
  SearchRequest r = request("llama3-405b", "dgx-h100", 65536, 2048);
  r.space.pp = {65536};
  EXPECT_NE(refusal(r).find("no valid layout"), std::string::npos) << refusal(r);
}

TEST(Search, HandlesOverAHundredThousandGpus) {
  // 1T parameters on 131,072 H100s (the case; it used to die of SIGFPE): the
  // divisors of 2^17 give 18 x 18 TP x PP pairs, each product taken without wrapping.
  SearchRequest r = request("gpt-1t", "dgx-h100", 131072, 4096);
  const SearchOutcome out = search(r);
  ASSERT_FALSE(out.ranked.empty());
  for (const auto& x : out.ranked) {
    EXPECT_EQ(x.result.config.gpus(), 131072);
    EXPECT_TRUE(x.result.fits);
  }
  EXPECT_GT(out.excluded.at("GPUs not divisible by TP x CP x PP"), 0u);  // e.g. TP 2^17 x PP 2
}

}  // namespace
}  // namespace cc

namespace cc {
namespace {

TEST(Search, TpCommOverlapAppliesToEverySequenceParallelLayoutAndOnlyThere) {
  // Llama 3 70B on 64 H100s, TP 4 or 8 pinned so every ranked layout has TP communication.
  SearchRequest r = request("llama3-70b", "dgx-h100", 64, 256);
  r.space.tp = {4, 8};
  r.space.attention = AttentionKernel::Flash;
  r.top = 50;
  const SearchOutcome plain = search(r);
  r.space.tp_comm_overlap = true;
  const SearchOutcome overlapped = search(r);
  ASSERT_FALSE(overlapped.ranked.empty());
  bool some_sp = false;
  for (const auto& x : overlapped.ranked) {
    EXPECT_EQ(x.result.config.tp_comm_overlap, x.result.config.sequence_parallel) << x.result.config.summary();
    some_sp = some_sp || x.result.config.sequence_parallel;
  }
  EXPECT_TRUE(some_sp);
  // Hiding communication can only help the best layout.
  EXPECT_LT(overlapped.ranked.front().result.iteration_time_s, plain.ranked.front().result.iteration_time_s);
}

}  // namespace
}  // namespace cc
