#include "gui/search_page.h"

#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/chart_axes.h"
#include "gui/search_table.h"
#include "gui/wheel_guard.h"
#include "interop/resolver.h"
#include "sim/analytic_costs.h"
#include "sim/error.h"

namespace cc::gui {

namespace {

// "8" or "4,8,16"; empty = every value that can work.
std::vector<int> int_list(const QLineEdit* edit, const char* what) {
  std::vector<int> out;
  for (const QString& part : edit->text().split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const int v = part.trimmed().toInt(&ok);
    if (!ok || v < 1) fail("search {}: '{}' is not a list of whole numbers >= 1 (e.g. 4,8,16)", what, edit->text().toStdString());
    out.push_back(v);
  }
  return out;
}

std::vector<bool> choice(const QComboBox* box) {
  switch (box->currentIndex()) {
    case 1: return {true};
    case 2: return {false};
    default: return {false, true};
  }
}

// Layouts refused only for memory that the scatter greys out: the fastest by the estimate.
// Each costs one simulation, about as many as the ranked list's admissions, so a few dozen
// keep the search's wall time close to the CLI's.
constexpr int kUnfitShown = 60;

QString point_tip(const SimResult& r, const QString& what) {
  // Expert parallelism spelt out where the layout has experts to spread (the summary names EP and
  // ETP only when EP > 1 or ETP was given).
  const QString experts = r.model.moe.enabled()
                              ? QObject::tr("\nEP %1 × ETP %2 (expert DP %3)")
                                    .arg(r.config.ep)
                                    .arg(r.config.expert_tp())
                                    .arg(r.config.expert_dp())
                              : QString();
  return QObject::tr("%1 %2%6\n%3 s, %4 GiB of %5 usable")
      .arg(what, QString::fromStdString(r.config.summary()))
      .arg(r.iteration_time_s, 0, 'f', 3)
      .arg(r.peak_memory_gib, 0, 'f', 1)
      .arg(r.usable_gib, 0, 'f', 1)
      .arg(experts);
}

QComboBox* both_on_off() {
  auto* box = new QComboBox;
  box->addItems({QObject::tr("both"), QObject::tr("on"), QObject::tr("off")});
  return box;
}

// What the search reads from a setup (request_for): everything but the layout fields it varies
// itself, so loading one of its own layouts leaves its results current.
Project search_inputs(Project p) {
  ParallelConfig read;
  read.global_batch = p.config.global_batch;
  read.moe = p.config.moe;
  read.overlap_grad_reduce = p.config.overlap_grad_reduce;
  read.overlap_param_gather = p.config.overlap_param_gather;
  read.tp_comm_overlap = p.config.tp_comm_overlap;
  read.grad_reduce_in_bf16 = p.config.grad_reduce_in_bf16;
  read.cross_entropy_fusion = p.config.cross_entropy_fusion;
  read.rope_fusion = p.config.rope_fusion;
  read.fp8_param_gather = p.config.fp8_param_gather;
  read.fp8_recipe = p.config.fp8_recipe;
  read.distributed_optimizer_instances = p.config.distributed_optimizer_instances;
  read.precision = p.config.precision;
  read.attention = p.config.attention;
  p.config = read;
  p.auto_dp = true;
  p.every_rank = false;
  return p;
}

QString setup_name(const Project& p) {
  return QObject::tr("%1 on %2 × %3, global batch %4")
      .arg(p.model_preset.empty() ? QObject::tr("a custom model") : QString::fromStdString(p.model_preset))
      .arg(p.gpus)
      .arg(QString::fromStdString(p.cluster.gpu.name))
      .arg(p.config.global_batch);
}

}  // namespace

SearchPage::SearchPage(QWidget* parent)
    : QWidget(parent),
      table_(new SearchTable(this)),
      proxy_(new QSortFilterProxyModel(this)),
      view_(new QTableView),
      scatter_(new QChartView),
      tp_(new QLineEdit),
      pp_(new QLineEdit),
      micro_(new QLineEdit),
      virtual_(new QLineEdit),
      ep_(new QLineEdit),
      etp_(new QLineEdit),
      filter_(new QLineEdit),
      sp_(both_on_off()),
      distopt_(both_on_off()),
      color_by_(new QComboBox),
      rc_none_(new QCheckBox(tr("none"))),
      rc_selective_(new QCheckBox(tr("selective"))),
      rc_full_(new QCheckBox(tr("full"))),
      cross_node_tp_(new QCheckBox(tr("allow TP across nodes"))),
      top_(new QSpinBox),
      run_(new QPushButton(tr("Run search"))),
      cancel_(new QPushButton(tr("Cancel"))),
      progress_bar_(new QProgressBar),
      status_(new QLabel),
      exclusions_(new QLabel),
      stale_note_(new QLabel),
      progress_(std::make_shared<Progress>()) {
  // The space: pins and lists as the CLI's `search` takes them.
  auto* space = new QGroupBox(tr("Search space (empty = every value that can work)"));
  auto* form = new QFormLayout(space);
  for (QLineEdit* e : {tp_, pp_, micro_, virtual_, ep_, etp_}) e->setPlaceholderText(tr("all, or e.g. 4,8,16"));
  // The fields are narrow at 1280 pixels, which cuts the placeholder: the tooltip has it whole.
  tp_->setToolTip(tr("TP sizes to try: all, or e.g. 4,8,16"));
  pp_->setToolTip(tr("PP sizes to try: all, or e.g. 4,8,16"));
  micro_->setToolTip(tr("Micro batch sizes to try: all, or e.g. 1,2,4"));
  virtual_->setToolTip(tr("Virtual stages per pipeline rank to try: all, or e.g. 1,2,4"));
  ep_->setToolTip(tr("MoE models: expert-parallel sizes (all: every divisor of the routed experts)"));
  etp_->setToolTip(tr("MoE models: expert tensor-parallel sizes (all: every divisor of TP)"));
  auto* lists = new QHBoxLayout;
  lists->addWidget(new QLabel(tr("TP")));
  lists->addWidget(tp_);
  lists->addWidget(new QLabel(tr("PP")));
  lists->addWidget(pp_);
  lists->addWidget(new QLabel(tr("micro batch")));
  lists->addWidget(micro_);
  lists->addWidget(new QLabel(tr("virtual stages")));
  lists->addWidget(virtual_);
  lists->addWidget(new QLabel(tr("EP")));
  lists->addWidget(ep_);
  lists->addWidget(new QLabel(tr("ETP")));
  lists->addWidget(etp_);
  form->addRow(lists);
  auto* modes = new QHBoxLayout;
  modes->addWidget(new QLabel(tr("recompute:")));
  for (QCheckBox* b : {rc_none_, rc_selective_, rc_full_}) {
    b->setChecked(true);
    modes->addWidget(b);
  }
  modes->addSpacing(16);
  modes->addWidget(new QLabel(tr("keep best")));
  top_->setRange(1, 100000);
  top_->setValue(200);
  modes->addWidget(top_);
  modes->addStretch(1);
  form->addRow(modes);
  // A row of its own, so the page fits a 1280-pixel window beside the setup dock.
  auto* switches = new QHBoxLayout;
  switches->addWidget(new QLabel(tr("sequence parallel")));
  switches->addWidget(sp_);
  switches->addWidget(new QLabel(tr("distributed optimizer")));
  switches->addWidget(distopt_);
  switches->addWidget(cross_node_tp_);
  switches->addStretch(1);
  form->addRow(switches);
  auto* controls = new QHBoxLayout;
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_bar_, 1);
  controls->addWidget(status_, 2);
  form->addRow(controls);
  exclusions_->setWordWrap(true);
  form->addRow(exclusions_);
  stale_note_->setObjectName("stale_search_note");
  stale_note_->setWordWrap(true);
  stale_note_->setStyleSheet("QLabel { color: #8a5300; background: #fff4e0; padding: 4px; }");
  stale_note_->hide();
  form->addRow(stale_note_);
  cancel_->setEnabled(false);
  status_->setWordWrap(true);

  // Results.
  proxy_->setSourceModel(table_);
  proxy_->setSortRole(Qt::UserRole);
  proxy_->setFilterKeyColumn(SearchTable::Layout);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(SearchTable::Rank, Qt::AscendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->setWordWrap(false);  // a layout is one line: "tp8 pp16 dp8 sp mb1 gb1536 v1 selective"
  view_->verticalHeader()->hide();
  filter_->setPlaceholderText(tr("filter layouts, e.g. \"pp16\" or \"selective\""));
  color_by_->addItems({tr("colour by recompute"), tr("colour by TP")});
  scatter_->setRenderHint(QPainter::Antialiasing);
  scatter_->chart()->setTitle(tr("Tokens/s vs peak memory"));  // short: the chart is narrow at 1280 pixels
  scatter_->setMinimumHeight(280);
  // Beside the plot, one entry a line: in a row under a narrow chart the names were cut to nothing.
  scatter_->chart()->legend()->setAlignment(Qt::AlignRight);

  auto* table_box = new QWidget;
  auto* tv = new QVBoxLayout(table_box);
  tv->setContentsMargins(0, 0, 0, 0);
  tv->addWidget(filter_);
  tv->addWidget(view_);
  auto* chart_box = new QWidget;
  auto* cv = new QVBoxLayout(chart_box);
  cv->setContentsMargins(0, 0, 0, 0);
  cv->addWidget(color_by_, 0, Qt::AlignRight);
  cv->addWidget(scatter_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_box);
  split->addWidget(chart_box);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 1);
  split->setSizes({880, 440});  // the table's nine columns in full, the chart beside them
  chart_box->setMinimumWidth(380);  // the plot and its legend whole in a 1280-pixel window

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(space);
  layout->addWidget(split, 1);

  connect(run_, &QPushButton::clicked, this, &SearchPage::run_requested);
  connect(cancel_, &QPushButton::clicked, this, &SearchPage::cancel);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    // A filter that hides the current row makes Qt move the current row to a neighbour; that is
    // not the user choosing a layout, so it loads nothing.
    refiltering_ = true;
    proxy_->setFilterFixedString(text);
    refiltering_ = false;
  });
  connect(color_by_, &QComboBox::currentIndexChanged, this, &SearchPage::rebuild_scatter);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (current.isValid() && !refiltering_) choose(proxy_->mapToSource(current).row());
  });
  guard_wheel(this);  // the wheel over "keep best" or a choice scrolls, never edits
  poll_.setInterval(50);
  connect(&poll_, &QTimer::timeout, this, &SearchPage::poll_progress);
}

SearchPage::~SearchPage() = default;

SearchRequest SearchPage::request_for(const Project& base, std::shared_ptr<const CostDatabase>* measured) const {
  // The stack as the resolver picks it for `simulate` and `search`: the one named, else the
  // cost database's.
  const std::shared_ptr<const CostDatabase> db = read_measured_costs(base.costs_file);
  if (measured) *measured = db;
  SearchRequest r;
  r.model = base.model;
  r.cluster = base.cluster;
  r.gpus = base.gpus;
  r.global_batch = base.config.global_batch;
  r.reserve = base.reserve;
  r.train_tokens = base.train_tokens;
  r.top = top_->value();
  r.unfit = kUnfitShown;
  r.space.tp = int_list(tp_, "TP");
  r.space.pp = int_list(pp_, "PP");
  r.space.micro_batch = int_list(micro_, "micro batch");
  r.space.virtual_stages = int_list(virtual_, "virtual stages");
  r.space.ep = int_list(ep_, "EP");
  r.space.etp = int_list(etp_, "ETP");
  r.space.moe = base.config.moe;  // the setup's MoE switches, applied to every layout
  r.space.sequence_parallel = choice(sp_);
  r.space.distributed_optimizer = choice(distopt_);
  r.space.recompute.clear();
  if (rc_none_->isChecked()) r.space.recompute.push_back(RecomputeGranularity::None);
  if (rc_selective_->isChecked()) r.space.recompute.push_back(RecomputeGranularity::Selective);
  if (rc_full_->isChecked()) r.space.recompute.push_back(RecomputeGranularity::Full);
  if (r.space.recompute.empty()) fail("search: tick at least one recompute mode");
  r.space.allow_cross_node_tp = cross_node_tp_->isChecked();
  r.space.overlap_grad_reduce = base.config.overlap_grad_reduce;
  r.space.overlap_param_gather = base.config.overlap_param_gather;
  r.space.tp_comm_overlap = base.config.tp_comm_overlap;  // as the setup asks, for every SP layout
  r.space.grad_reduce_in_bf16 = base.config.grad_reduce_in_bf16;
  r.space.cross_entropy_fusion = base.config.cross_entropy_fusion;
  r.space.rope_fusion = base.config.rope_fusion;
  r.space.fp8_param_gather = base.config.fp8_param_gather;
  r.space.fp8_recipe = base.config.fp8_recipe;
  r.space.distributed_optimizer_instances = base.config.distributed_optimizer_instances;
  r.space.precision = base.config.precision;
  r.space.attention = base.config.attention;
  r.space.framework = resolved_stack(base.framework, db.get());
  check_fused_cross_entropy(r.space.cross_entropy_fusion, r.space.framework);
  // Ties as the CLI marks them: within the cost source's cross-validated error (a measured
  // database has none, so it ties nothing).
  r.tie_tolerance = !db
                        ? cross_validated_tie_tolerance(AnalyticCosts(r.cluster, r.space.precision, r.space.framework), r.gpus)
                        : 0.0;
  return r;
}

void SearchPage::start(const Project& base) {
  SearchRequest request;
  std::shared_ptr<const CostDatabase> measured;
  try {
    request = request_for(base, &measured);
  } catch (const SpecError& e) {
    status_->setText(QString::fromStdString(e.what()));
    emit finished();
    return;
  }
  const int generation = ++generation_;
  searching_for_ = base;
  current_setup_ = base;
  progress_ = std::make_shared<Progress>();
  running_ = true;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_bar_->setValue(0);
  status_->setText(tr("estimating…"));
  started_ = std::chrono::steady_clock::now();
  poll_.start();

  auto* watcher = new QFutureWatcher<SearchRun>(this);
  connect(watcher, &QFutureWatcher<SearchRun>::finished, this, [this, watcher, generation] {
    on_done(generation, watcher->result());
    watcher->deleteLater();
  });
  const std::string costs_file = base.costs_file;
  watcher->setFuture(QtConcurrent::run([request, measured, costs_file, progress = progress_]() mutable {
    SearchRun run;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const std::unique_ptr<CostSource> costs =
          make_cost_source(measured, costs_file, request.cluster, request.space.precision, request.space.framework);
      request.costs = costs.get();
      request.cancel = &progress->cancel;
      // Called on this worker thread; the page polls the counters from the GUI thread.
      auto report = [progress](std::size_t done, std::size_t total, const char* phase) {
        progress->phase.store(std::string_view(phase) == "simulating" ? 1 : 0);
        progress->total.store(total);
        progress->done.store(done);
      };
      run.outcome = std::make_shared<SearchOutcome>(search(request, report));
    } catch (const SpecError& e) {
      run.error = e.what();
    } catch (const SearchCancelled& e) {
      run.error = e.what();  // the page has moved on already; this answer is dropped
    }
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return run;
  }));
}

void SearchPage::cancel() {
  if (!running_) return;
  progress_->cancel.store(true);  // the worker stops after the layout each thread holds
  ++generation_;  // and its answer, if any, is dropped
  running_ = false;
  poll_.stop();
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  progress_bar_->setValue(0);
  status_->setText(tr("cancelled; the results below are from the previous search"));
  emit finished();
}

void SearchPage::poll_progress() {
  const std::size_t done = progress_->done.load(), total = progress_->total.load();
  const int phase = progress_->phase.load();
  if (total == 0) return;
  // Estimating is quick and simulating is most of the time: the bar shows each phase.
  progress_bar_->setRange(0, static_cast<int>(total));
  progress_bar_->setValue(static_cast<int>(done));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double eta = done > 0 ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : 0;
  status_->setText(tr("%1 %2 / %3 layouts, %4 s elapsed%5")
                       .arg(phase == 1 ? tr("simulating") : tr("estimating"))
                       .arg(done)
                       .arg(total)
                       .arg(elapsed, 0, 'f', 1)
                       .arg(phase == 1 && done > 0 ? tr(", about %1 s left").arg(eta, 0, 'f', 1) : QString()));
}

void SearchPage::on_done(int generation, const SearchRun& run) {
  if (generation != generation_) return;  // cancelled or superseded
  running_ = false;
  poll_.stop();
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  if (!run.outcome) {
    status_->setText(QString::fromStdString(run.error));
    emit finished();
    return;
  }
  const SearchOutcome& o = *run.outcome;
  progress_bar_->setRange(0, 1);
  progress_bar_->setValue(1);
  status_->setText(tr("%1 layouts ranked in %2 s").arg(o.ranked.size()).arg(run.wall_seconds, 0, 'f', 2));
  QStringList excluded;
  for (const auto& [reason, count] : o.excluded) excluded << QStringLiteral("%1: %2").arg(QString::fromStdString(reason)).arg(count);
  exclusions_->setText(tr("Enumerated %1, valid %2, fitting %3, simulated %4. Excluded — %5. Greyed on the plot: "
                          "the %6 fastest that do not fit.")
                           .arg(o.enumerated)
                           .arg(o.valid)
                           .arg(o.fitting)
                           .arg(o.simulated)
                           .arg(excluded.isEmpty() ? tr("none") : excluded.join("; "))
                           .arg(o.unfit.size()));
  table_->set_outcome(run.outcome);
  results_for_ = searching_for_;
  set_current_setup(current_setup_);  // an edit made while the search ran makes them stale at once
  rebuild_scatter();
  emit finished();
}

void SearchPage::set_current_setup(const Project& current) {
  current_setup_ = current;
  results_stale_ = results_for_ && !(search_inputs(*results_for_) == search_inputs(current));
  stale_note_->setVisible(results_stale_);
  if (results_stale_)
    stale_note_->setText(tr("These results are for %1; the setup has changed since. Run the search again to load "
                            "a layout from it.")
                             .arg(setup_name(*results_for_)));
}

void SearchPage::choose(int source_row) {
  if (source_row < 0 || source_row >= table_->rowCount()) return;
  if (results_stale_) return;  // a layout searched for another setup is not one for this setup
  emit layout_chosen(table_->layout(source_row).result.config);
}

void SearchPage::rebuild_scatter() {
  QChart* c = scatter_->chart();
  clear_chart(c);
  unfit_series_ = nullptr;
  const SearchOutcome* o = table_->outcome();
  if (!o || o->ranked.empty()) return;
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  x->setTitleText(tr("peak GiB per GPU"));
  y->setTitleText(tr("tokens / s"));
  y->setLabelFormat("%.0f");
  x->setLabelFormat("%.0f");
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  const bool by_tp = color_by_->currentIndex() == 1;
  std::map<QString, QScatterSeries*> groups;
  auto* tied = new QScatterSeries;
  tied->setName(tr("tied"));
  tied->setMarkerSize(15);
  tied->setColor(Qt::transparent);
  tied->setBorderColor(Qt::black);
  double max_gib = o->ranked.front().result.usable_gib, max_tps = 0, min_tps = o->ranked.front().result.tokens_per_s;
  // Points keep their row: index i of series s is the layout at rows[s][i].
  auto rows = std::make_shared<std::map<QScatterSeries*, std::vector<int>>>();
  for (int i = 0; i < static_cast<int>(o->ranked.size()); ++i) {
    const SimResult& r = o->ranked[static_cast<std::size_t>(i)].result;
    const QString key = by_tp ? QStringLiteral("TP %1").arg(r.config.tp) : QString::fromLatin1(to_string(r.config.recompute));
    QScatterSeries*& s = groups[key];
    if (!s) {
      s = new QScatterSeries;
      s->setName(key);
      s->setMarkerSize(9);
    }
    s->append(r.peak_memory_gib, r.tokens_per_s);
    (*rows)[s].push_back(i);
    if (o->ranked[static_cast<std::size_t>(i)].tied) tied->append(r.peak_memory_gib, r.tokens_per_s);
    max_gib = std::max(max_gib, r.peak_memory_gib);
    max_tps = std::max(max_tps, r.tokens_per_s);
    min_tps = std::min(min_tps, r.tokens_per_s);
  }
  for (auto& [key, s] : groups) {
    c->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    const auto& series_rows = (*rows)[s];
    connect(s, &QScatterSeries::hovered, this, [this, s, series_rows](const QPointF& p, bool state) {
      if (!state) return QToolTip::hideText();
      for (int k = 0; k < s->count(); ++k)
        if (s->at(k) == p) {
          const int row = series_rows[static_cast<std::size_t>(k)];
          QToolTip::showText(QCursor::pos(), point_tip(table_->layout(row).result, QStringLiteral("#%1").arg(row + 1)));
          return;
        }
    });
    connect(s, &QScatterSeries::clicked, this, [this, s, series_rows](const QPointF& p) {
      for (int k = 0; k < s->count(); ++k)
        if (s->at(k) == p) {
          const int row = series_rows[static_cast<std::size_t>(k)];
          view_->selectRow(proxy_->mapFromSource(table_->index(row, 0)).row());
          return;
        }
    });
  }
  c->addSeries(tied);
  tied->attachAxis(x);
  tied->attachAxis(y);
  // Layouts that do not fit, greyed: where more memory (or a smaller reserve) would lead.
  // They are not ranked, so they have no row to load.
  unfit_series_ = new QScatterSeries;
  unfit_series_->setName(tr("does not fit"));
  unfit_series_->setMarkerSize(8);
  unfit_series_->setColor(QColor(170, 170, 170, 200));
  unfit_series_->setBorderColor(QColor(130, 130, 130));
  for (const RankedLayout& u : o->unfit) {
    unfit_series_->append(u.result.peak_memory_gib, u.result.tokens_per_s);
    max_gib = std::max(max_gib, u.result.peak_memory_gib);
    max_tps = std::max(max_tps, u.result.tokens_per_s);
    min_tps = std::min(min_tps, u.result.tokens_per_s);
  }
  c->addSeries(unfit_series_);
  unfit_series_->attachAxis(x);
  unfit_series_->attachAxis(y);
  connect(unfit_series_, &QScatterSeries::hovered, this, [this](const QPointF& p, bool state) {
    if (!state) return QToolTip::hideText();
    const SearchOutcome* now = table_->outcome();
    for (int k = 0; now && k < unfit_series_->count(); ++k)
      if (unfit_series_->at(k) == p) {
        QToolTip::showText(QCursor::pos(), point_tip(now->unfit[static_cast<std::size_t>(k)].result, tr("does not fit:")));
        return;
      }
  });
  auto* usable = new QLineSeries;
  const double hbm = o->ranked.front().result.usable_gib;
  usable->setName(tr("usable HBM"));
  usable->setPen(QPen(Qt::red, 2, Qt::DashLine));
  // Throughputs of ranked layouts sit within tens of percent of each other: the y axis spans
  // them, not zero to the best, so the field of near-equals is readable.
  const double pad = std::max(1.0, (max_tps - min_tps) * 0.08);
  usable->append(hbm, min_tps - pad);
  usable->append(hbm, max_tps + pad);
  c->addSeries(usable);
  usable->attachAxis(x);
  usable->attachAxis(y);
  set_round_ticks(x, max_gib * 1.1);
  y->setRange(min_tps - pad, max_tps + pad);
  y->applyNiceNumbers();
}

}  // namespace cc::gui
