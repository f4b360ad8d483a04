#ifndef PTXBENCH_RESULTS_REPORT_HTML_STYLE_H_
#define PTXBENCH_RESULTS_REPORT_HTML_STYLE_H_

// The style sheet of the HTML report (results/report/html.h), inlined into its
// <head>: a centred column on a laptop screen, figures in a grid that falls
// to one column on a narrow one; in print, no backgrounds and no figure or
// table split across pages. System fonts only: nothing is fetched.

namespace ptxbench::report {

inline constexpr char kHtmlStyle[] = R"(<style>
:root { --ink: #1b1f24; --muted: #59636e; --rule: #d8dee4; --faint: #eef1f4;
  --warn: #b42318; --warn-bg: #fef3f2; --info: #7a5b00; --info-bg: #fff8e1; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 24px 40px; }
header.masthead { border-top: 4px solid var(--ink); padding-top: 14px; }
.kicker { margin: 0; font-size: 12px; letter-spacing: .08em; text-transform: uppercase;
  color: var(--muted); }
h1 { margin: 2px 0 4px; font-size: 28px; line-height: 1.2; letter-spacing: -.01em;
  overflow-wrap: anywhere; }
h2 { margin: 34px 0 12px; padding-bottom: 4px; font-size: 20px;
  border-bottom: 1px solid var(--rule); }
h3 { margin: 24px 0 6px; font-size: 16px; overflow-wrap: anywhere; }
h4 { margin: 16px 0 6px; font-size: 14px; color: var(--muted); font-weight: 600; }
.meta { margin: 0; color: var(--muted); font-size: 13px; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  overflow-wrap: anywhere; }
.banner { margin: 16px 0; padding: 10px 14px; border: 2px solid var(--warn); border-radius: 6px;
  background: var(--warn-bg); color: #55160c; }
.banner strong { color: var(--warn); letter-spacing: .03em; }
.banner.scripted, .banner.info { border-color: var(--info); background: var(--info-bg);
  color: #3d2e00; }
.banner.scripted strong, .banner.info strong { color: var(--info); }
.banner p { margin: 2px 0; }
.cards { display: grid; gap: 14px;
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 380px), 1fr)); }
.card { padding: 12px 16px; border: 1px solid var(--rule); border-radius: 8px; }
.card h3 { margin: 0 0 6px; }
.card dl { display: grid; grid-template-columns: auto 1fr; gap: 1px 14px; margin: 0;
  font-size: 13px; }
.card dt { color: var(--muted); }
.card dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.figures { display: grid; gap: 18px;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 540px), 1fr)); }
figure.fig { margin: 0; padding: 12px 12px 8px; border: 1px solid var(--rule);
  border-radius: 8px; min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figure.missing { align-self: start; }
svg.plot { display: block; width: 100%; max-width: 640px; height: auto; margin: 0 auto; }
figcaption { margin: 6px 2px 8px; font-size: 13px; color: var(--muted); }
.fig-title { margin: 0 0 6px; font-weight: 600; }
.note { margin: 6px 0; padding: 8px 12px; border-radius: 6px; background: var(--faint);
  font-size: 13px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums;
  min-width: 100%; }
th, td { padding: 3px 6px; text-align: right; white-space: nowrap; }
th { border-bottom: 1.5px solid var(--ink); font-weight: 600; }
td { border-bottom: 1px solid var(--faint); }
tbody tr:last-child td { border-bottom: 1.5px solid var(--ink); }
tr.total td { font-weight: 600; border-top: 1px solid var(--ink); }
th.key, td.key { text-align: left; }
td.key { white-space: normal; }
.k { white-space: nowrap; }
figure table { font-size: 11.5px; }
figure th, figure td { padding: 2px 4px; }
table.metrics th { white-space: normal; vertical-align: bottom; }
.badge { display: inline-block; white-space: nowrap; margin-left: 4px; padding: 0 5px;
  border-radius: 3px; font-size: 10.5px; font-weight: 700; letter-spacing: .04em;
  line-height: 1.5; color: #fff; background: var(--warn); }
.badge.scripted { background: var(--info); }
footer { margin-top: 40px; padding-top: 10px; border-top: 1px solid var(--rule);
  color: var(--muted); font-size: 12.5px; }
footer p { margin: 3px 0; }
figure.fig, .card, table, .banner { break-inside: avoid; page-break-inside: avoid; }
@page { margin: 14mm; }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  .banner, .note, .badge { background: none; }
  .badge { color: var(--warn); border: 1px solid currentColor; }
  .badge.scripted { color: var(--info); }
  h2, h3, h4 { break-after: avoid; page-break-after: avoid; }
  .table-wrap { overflow: visible; }
}
</style>
)";

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_HTML_STYLE_H_
