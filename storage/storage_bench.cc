// Single-row insert throughput on a temp-file database (WAL,
// synchronous=NORMAL unless the benchmark argument asks for FULL):
//   BM_TransactionPerInsert: BEGIN IMMEDIATE; INSERT; COMMIT per row.
//   BM_WriteQueueBatched:    one WriteQueue op per row, Post()ed, committed in
//                            batches by the writer thread.
//   BM_WriteQueueRunSync:    one WriteQueue op per row, waiting for each
//                            (batches of one: the queue's overhead alone).
// Run: storage_bench [--benchmark_min_time=1]

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "storage/database.h"
#include "storage/migrations.h"
#include "storage/write_queue.h"

namespace ptxbench::storage {
namespace {

const std::vector<Migration> kSchema = {
    {1, "CREATE TABLE rows(id INTEGER PRIMARY KEY, experiment TEXT NOT NULL, "
        "state TEXT NOT NULL, unix_ms INTEGER NOT NULL);"}};

// A fresh database file, removed with its WAL when the benchmark ends.
class TempDb {
 public:
  explicit TempDb(bool synchronous_full) {
    path_ = (std::filesystem::temp_directory_path() /
             ("ptxb_storage_bench_" + std::to_string(::getpid()) + ".db"))
                .string();
    Remove();
    Database::Options options;
    options.synchronous_full = synchronous_full;
    auto db = OpenAndMigrate(path_, options, 1, "bench", kSchema);
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
      std::abort();
    }
    db_ = std::move(db).value();
  }
  ~TempDb() {
    db_.reset();
    Remove();
  }
  std::unique_ptr<Database> Take() { return std::move(db_); }
  Database& db() { return *db_; }

 private:
  void Remove() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix, ec);
  }
  std::string path_;
  std::unique_ptr<Database> db_;
};

absl::Status InsertRow(Database& db, int64_t i) {
  PTXB_ASSIGN_OR_RETURN(Statement * insert,
                        db.Cached("INSERT INTO rows(experiment, state, unix_ms) "
                                  "VALUES ('exp-1', 'LLM_PENDING', ?1)"));
  insert->BindInt64(1, i);
  return insert->Run();
}

void Check(const absl::Status& status, benchmark::State& state) {
  if (!status.ok()) state.SkipWithError(status.ToString().c_str());
}

void BM_TransactionPerInsert(benchmark::State& state) {
  TempDb temp(state.range(0) != 0);
  int64_t i = 0;
  for (auto _ : state) {
    Transaction txn(&temp.db());
    Check(txn.Begin(), state);
    Check(InsertRow(temp.db(), i++), state);
    Check(txn.Commit(), state);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_WriteQueueBatched(benchmark::State& state) {
  TempDb temp(state.range(0) != 0);
  WriteQueue queue(temp.Take(), {});
  queue.Start();
  std::atomic<int64_t> failed{0};
  int64_t i = 0;
  for (auto _ : state) {
    queue.Post([n = i++](Database& db) { return InsertRow(db, n); },
               [&failed](absl::Status s) {
                 if (!s.ok()) failed.fetch_add(1);
               });
  }
  // Every posted row is committed before the clock stops.
  Check(queue.RunSync([](Database&) { return absl::OkStatus(); }), state);
  WriteQueue::Stats stats = queue.GetStats();
  queue.Stop();
  if (failed.load() != 0) state.SkipWithError("inserts failed");
  state.SetItemsProcessed(state.iterations());
  state.counters["rows_per_commit"] =
      static_cast<double>(stats.ops) / static_cast<double>(std::max<int64_t>(1, stats.commits));
}

void BM_WriteQueueRunSync(benchmark::State& state) {
  TempDb temp(state.range(0) != 0);
  WriteQueue queue(temp.Take(), {});
  queue.Start();
  int64_t i = 0;
  for (auto _ : state) {
    Check(queue.RunSync([n = i++](Database& db) { return InsertRow(db, n); }), state);
  }
  queue.Stop();
  state.SetItemsProcessed(state.iterations());
}

// Argument: 0 = synchronous NORMAL, 1 = synchronous FULL.
// Real time: the WriteQueue work happens on its writer thread.
BENCHMARK(BM_TransactionPerInsert)->ArgName("sync_full")->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_WriteQueueBatched)->ArgName("sync_full")->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_WriteQueueRunSync)->ArgName("sync_full")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace ptxbench::storage

int main(int argc, char** argv) {
  ptxbench::InitLogging("storage_bench", ptxbench::LogLevel::kWarning);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
