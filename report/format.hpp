// The one place that turns text into something another language reads: HTML, SVG ids,
// gnuplot scripts and their inline data, CSV fields, file names. Text from a result file,
// a device name or an option may hold anything (quotes, line breaks, markup, backticks),
// so every writer passes such text through these and never pastes it in as it is.
// Below them, the number and status texts every writer shares, so that a figure reads the
// same in the terminal, CSV and HTML of every probe.
// Internal to the report writers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd::report::detail {

// Text for an HTML page, as element content or inside a quoted attribute value (either
// quote): & < > " ' escaped. Control characters other than tab and line breaks become
// spaces (they are not allowed in HTML and some end an SVG parse).
std::string html_escape(const std::string& s);

// A gnuplot string literal: single quotes, inside which gnuplot does no backtick
// substitution, no macro expansion and no escapes, and where only a doubled quote ('')
// stands for a quote. Line breaks and other control characters become spaces: a line
// break would end the command and let the rest run as a command of its own.
std::string gnuplot_quote(const std::string& s);

// A text column of a gnuplot inline data block ($name << EOD ... EOD): double quotes
// around it, with " and control characters replaced, so that it can neither end the
// column, nor the line, nor the block (a line "EOD" would end it and run what follows).
std::string gnuplot_datum(const std::string& s);

// An SVG/HTML id: only [A-Za-z0-9_-], starting with a letter. Text that already has that
// shape is kept; anything else is mapped to that alphabet and tagged with a hash of the
// original, so that two different names never share an id.
std::string svg_id(const std::string& s);

// A name from a file used as (part of) a file name: [A-Za-z0-9_.-], not starting with a
// dot, at most 80 characters; like svg_id, other text is mapped and tagged with a hash.
std::string file_stem(const std::string& s);

// A CSV field: quoted (with "" for ") where it holds a comma, quote, line break or
// leading/trailing blank; text a spreadsheet would run as a formula (= + @ at the start)
// gets a leading '.
std::string csv_field(const std::string& s);

// A number for a gnuplot script or a CSV file: %.9g (every digit a double needs); "NaN"
// where not finite, which gnuplot reads as a missing value (a heat map's blank cell).
std::string script_num(double v);

// ---- numbers and statuses as the writers print them ----

// Fixed-point (gd::format_fixed), or "-" where the value is absent or not finite.
std::string opt_fixed(const std::optional<double>& v, int digits);
// format_bytes, or "-" where absent.
std::string opt_bytes(const std::optional<uint64_t>& v);
// "1980 MHz", "-" where absent.
std::string mhz(const std::optional<double>& v);
// "12.34 ±1.2% UNSTABLE": the median with `digits` decimals, half the IQR as a percentage of
// it (where there are several samples), and UNSTABLE where the spread is too wide to be a
// result (gd::is_unstable); "-" where absent.
std::string median_spread(const std::optional<Summary>& s, int digits);
// gd::status_text (status.hpp), named here as the report writers have always called it.
using gd::status_text;

}  // namespace gd::report::detail
