#ifndef PTXBENCH_SCHEDULER_STORE_TURN_VERDICTS_H_
#define PTXBENCH_SCHEDULER_STORE_TURN_VERDICTS_H_

// The verdict columns of turns evaluated before they existed, filled once
// by a schema migration (schema.cc, versions 13 and 14) so that the reports
// read columns only and never decode a result themselves.

#include "absl/status/status.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// In the migration's transaction: for every evaluated turn whose result
// verdict::Correct could call correct (status PASSED), turns.correct from
// verdict::Judge of its result blob; for every turn evaluated before schema
// version 3 (eval_ms NULL), also kernel_speedup, roofline, fallback_correct
// and eval_ms, and its trajectory marked simulated when the result was. The
// rest keep correct = 0: verdict::Correct is false for them. kDataLoss,
// naming the turn, for a result that does not parse.
absl::Status StoreVerdictsOfEvaluatedTurns(storage::Database& db);

// In the migration's transaction (schema.cc, version 14): for every correct
// turn, turns.weighted_roofline and sol_score from verdict::WeightedScores of
// its result blob, every workload weighing 1 (none had an importance
// before). The others keep 0 and -1 (unknown), as WeightedScores gives for
// any result that is not correct. kDataLoss, naming the turn, for a result
// that does not parse.
absl::Status StoreScoresOfCorrectTurns(storage::Database& db);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TURN_VERDICTS_H_
