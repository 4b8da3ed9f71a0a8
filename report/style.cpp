#include "style.hpp"

namespace gd::report::detail {

namespace {

const char* kBase = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
       margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 0.25em 0.7em; text-align: left;
         vertical-align: top; }
th { background: #f4f4f4; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { background: none; font-weight: normal; color: #555; }
.note { background: #fff6d6; border: 1px solid #e6d28a; padding: 0.5em 0.8em; margin: 0.8em 0; }
.muted { color: #777; }
.chart svg { max-width: 100%; height: auto; display: block; }
figure.chart { margin: 0.8em 0; }
figcaption { color: #555; font-size: 0.9em; }
details { margin: 0.6em 0; }
summary { cursor: pointer; color: #245; }
code { background: #f4f4f4; padding: 0 0.25em; overflow-wrap: anywhere; }
footer { margin-top: 3em; color: #888; font-size: 0.85em; }
.wide { overflow-x: auto; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  @page { margin: 14mm 12mm; }
  h2 { break-before: page; page-break-before: always; margin-top: 0; }
  h2.keep, .facts h2, body > h2:first-of-type { break-before: auto; page-break-before: auto; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  tr, figure.chart, .chart svg, svg.diagram { break-inside: avoid; page-break-inside: avoid; }
  table { font-size: 8.5pt; max-width: 100%; }
  td, th { overflow-wrap: anywhere; }
  .wide { overflow: visible; }
  svg { max-width: 100% !important; height: auto !important; }
  a { color: inherit; text-decoration: none; }
  details > summary { list-style: none; }
  nav.toc { break-after: page; page-break-after: always; }
}
)css";

}  // namespace

std::string page_css(int max_width_px) {
  return "\nbody { max-width: " + std::to_string(max_width_px) + "px; }" + kBase;
}

}  // namespace gd::report::detail
