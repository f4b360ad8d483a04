// The memcheck gate's reading of compute-sanitizer logs (sanitizer_log.h),
// on logs written by hand in the shape compute-sanitizer 2025 writes them.
#include "worker/runner/measure/sanitizer_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace ptxbench::runner {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr char kBanner[] = "========= COMPUTE-SANITIZER\n";

// One driver probe of its own entry points, as the sanitizer reports it.
constexpr char kProbe[] =
    "========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on "
    "CUDA API call to cuGetProcAddress_v2.\n"
    "=========     Saved host backtrace up to driver entry point at error\n"
    "=========         Host Frame: cuGetProcAddress_v2 [0x2a51f2] in libcuda.so.1\n"
    "=========         Host Frame: cudart::globalState::initializeDriverEntrypoints() "
    "[0x1c2ad] in ptxbench-candidate-host\n"
    "=========\n";

constexpr char kOutOfBoundsWrite[] =
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at gemm_kernel(const float *, const float *, float *, int, int, int)+0x90 in "
    "/tmp/ptxb-build-1f3a/kernel.cu:12\n"
    "=========     by thread (0,0,0) in block (0,0,0)\n"
    "=========     Address 0x7f3a2c000400 is out of bounds\n"
    "=========     and is 1 bytes after the nearest allocation at 0x7f3a2c000000 of size 1024 "
    "bytes\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: cuLaunchKernel [0x2c1a3e] in libcuda.so.1\n"
    "=========         Host Frame: run [0x1a2b] in kernel.so\n"
    "=========\n";

std::string Log(const std::string& body, const std::string& summary) {
  return kBanner + body + "========= " + summary + "\n";
}

TEST(SanitizerLog, AFinishedReportWithNothingInItIsClean) {
  const SanitizerFindings f = JudgeSanitizerLog(Log("", "ERROR SUMMARY: 0 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kClean);
  EXPECT_EQ(f.errors, 0);
  EXPECT_EQ(f.report, "");
}

TEST(SanitizerLog, DriverProbesAreNoiseEvenThoughTheSummaryCountsThem) {
  const SanitizerFindings f =
      JudgeSanitizerLog(Log(std::string(kProbe) + kProbe, "ERROR SUMMARY: 2 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kClean) << f.report << f.incomplete;
  EXPECT_EQ(f.report, "");
}

TEST(SanitizerLog, AnOutOfBoundsWriteIsAnErrorReportedWithoutHostFramesOrBanners) {
  const SanitizerFindings f = JudgeSanitizerLog(
      Log(std::string(kProbe) + kOutOfBoundsWrite, "ERROR SUMMARY: 2 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  EXPECT_EQ(f.errors, 1);
  EXPECT_THAT(f.report, HasSubstr("========= Invalid __global__ write of size 4 bytes\n"));
  EXPECT_THAT(f.report, HasSubstr("by thread (0,0,0) in block (0,0,0)"));
  EXPECT_THAT(f.report, HasSubstr("Address 0x7f3a2c000400 is out of bounds"));
  for (const char* gone : {"Host Frame", "Saved host backtrace", "COMPUTE-SANITIZER",
                           "ERROR SUMMARY", "cuGetProcAddress"}) {
    EXPECT_THAT(f.report, Not(HasSubstr(gone))) << gone;
  }
  ASSERT_EQ(f.locations.size(), 1u);
  EXPECT_EQ(f.locations[0].file, "/tmp/ptxb-build-1f3a/kernel.cu");
  EXPECT_EQ(f.locations[0].line, 12);
}

TEST(SanitizerLog, AnApiErrorOtherThanAProbeIsAnError) {
  const SanitizerFindings f = JudgeSanitizerLog(Log(
      "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch "
      "failure\" on CUDA API call to cudaStreamSynchronize.\n"
      "=========     Saved host backtrace up to driver entry point at error\n"
      "=========         Host Frame: cuStreamSynchronize [0x31e4c5] in libcuda.so.1\n"
      "=========\n",
      "ERROR SUMMARY: 1 error"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  EXPECT_THAT(f.report, HasSubstr("cudaErrorLaunchFailure"));
}

TEST(SanitizerLog, AnErrorThePrintLimitLeftOutStillCounts) {
  // print limit 1, spent on a probe: the write itself is only in the count.
  const SanitizerFindings f = JudgeSanitizerLog(Log(kProbe, "ERROR SUMMARY: 2 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  EXPECT_EQ(f.errors, 1);
  EXPECT_THAT(f.report, HasSubstr("print limit"));
}

TEST(SanitizerLog, NotesOfTheSanitizerAreNotReports) {
  const SanitizerFindings f = JudgeSanitizerLog(
      Log("========= Target application returned an error\n"
          "========= Warning: Device backtrace not available\n",
          "ERROR SUMMARY: 0 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kClean);
}

TEST(SanitizerLog, AnUnknownRecordCountsAsAnError) {
  // Fail closed: a kind of report this reader does not know is still one.
  const SanitizerFindings f = JudgeSanitizerLog(Log(
      "========= Misaligned Shared or Local Address\n"
      "=========     at k()+0x40 in kernel.cu:7\n",
      "ERROR SUMMARY: 1 error"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  ASSERT_EQ(f.locations.size(), 1u);
  EXPECT_EQ(f.locations[0].line, 7);
}

TEST(SanitizerLog, AReportThatDidNotFinishIsNeverClean) {
  EXPECT_EQ(JudgeSanitizerLog("").verdict, SanitizerVerdict::kIncomplete);
  const SanitizerFindings cut = JudgeSanitizerLog(kBanner);
  EXPECT_EQ(cut.verdict, SanitizerVerdict::kIncomplete);
  EXPECT_THAT(cut.incomplete, HasSubstr("ERROR SUMMARY"));
  // A summary without the banner is not a log of the sanitizer's either.
  EXPECT_EQ(JudgeSanitizerLog("========= ERROR SUMMARY: 0 errors\n").verdict,
            SanitizerVerdict::kIncomplete);
  EXPECT_EQ(JudgeSanitizerLog(Log("========= Internal Sanitizer Error: the tool failed\n",
                                  "ERROR SUMMARY: 0 errors"))
                .verdict,
            SanitizerVerdict::kIncomplete);
}

TEST(SanitizerLog, AnErrorReportedBeforeTheSanitizerWasStoppedStillCounts) {
  // A hang killed at the deadline: no summary, but the write was reported.
  const SanitizerFindings f = JudgeSanitizerLog(std::string(kBanner) + kOutOfBoundsWrite);
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
}

TEST(SanitizerLog, WhatTheKernelPrintsCannotForgeACleanReport) {
  // Were the candidate's stdout in the log (it never is: the sanitizer's
  // --log-file is a file of its own), a printed "clean" summary after a real
  // report would not hide the report ...
  const std::string forged_clean = std::string(kBanner) + kOutOfBoundsWrite +
                                   "ERROR SUMMARY: 0 errors\n"
                                   "========= ERROR SUMMARY: 0 errors\n";
  EXPECT_NE(JudgeSanitizerLog(forged_clean).verdict, SanitizerVerdict::kClean);
  // ... and a printed line without the prefix makes the log unreadable, not clean.
  const std::string printed = Log("result ok\n", "ERROR SUMMARY: 0 errors");
  EXPECT_EQ(JudgeSanitizerLog(printed).verdict, SanitizerVerdict::kIncomplete);
  // A second summary never takes back the records before it.
  EXPECT_EQ(JudgeSanitizerLog(Log(kOutOfBoundsWrite, "ERROR SUMMARY: 0 errors")).verdict,
            SanitizerVerdict::kErrors);
}

TEST(SanitizerLog, TheReportIsBounded) {
  std::string body;
  for (int i = 0; i < 2000; ++i) body += kOutOfBoundsWrite;
  const SanitizerFindings f = JudgeSanitizerLog(Log(body, "ERROR SUMMARY: 2000 errors"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  EXPECT_LE(f.report.size(), kMaxSanitizerReportBytes + 64);
  EXPECT_THAT(f.report, HasSubstr("report cut"));
  EXPECT_EQ(f.locations.size(), 1u);  // the same line, once
}

TEST(SanitizerLog, SourceContextShowsTheFaultingLineOfTheSubmission) {
  std::string source;
  for (int i = 1; i <= 20; ++i) source += "line " + std::to_string(i) + "\n";
  const std::string context = SourceContext(
      {{"/tmp/ptxb-build-1f3a/kernel.cu", 12}, {"/usr/include/cuda/std/x.h", 3}}, "kernel.cu",
      source, 2);
  EXPECT_THAT(context, HasSubstr("kernel.cu:12\n"));
  EXPECT_THAT(context, HasSubstr(">    12 | line 12\n"));
  EXPECT_THAT(context, HasSubstr("     10 | line 10\n"));
  EXPECT_THAT(context, HasSubstr("     14 | line 14\n"));
  EXPECT_THAT(context, Not(HasSubstr("line 15")));
  EXPECT_THAT(context, Not(HasSubstr("x.h")));
  // A line past the end of the source (a forged or stale location) shows nothing.
  EXPECT_EQ(SourceContext({{"kernel.cu", 99}}, "kernel.cu", source, 2), "");
}

// Errors the summary counts in a log whose records this reader did not know
// as records (indented, before any record): the report shows those lines,
// never a bare count.
TEST(SanitizerLog, UncountedErrorsShowTheLinesTheReaderCouldNotPlace) {
  const SanitizerFindings f = JudgeSanitizerLog(
      Log("=========     Invalid __global__ write of size 2 bytes (a shape not known)\n"
          "=========     at k+0x10 in /b/kernel.cu:7\n",
          "ERROR SUMMARY: 1 error"));
  EXPECT_EQ(f.verdict, SanitizerVerdict::kErrors);
  EXPECT_THAT(f.report, HasSubstr("counted 1 error(s)"));
  EXPECT_THAT(f.report, HasSubstr("lines of the log not read as records:"));
  EXPECT_THAT(f.report, HasSubstr("Invalid __global__ write of size 2 bytes"));
}

}  // namespace
}  // namespace ptxbench::runner
