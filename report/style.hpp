// The style sheet of the HTML pages (the run report and the comparison page): one look,
// one definition. Each page adds its own rules after it.
#pragma once

#include <string>

namespace gd::report::detail {

// The shared rules, with the body `max_width_px` wide on screen, and the print rules (every
// section on a new page, tables and charts fitted to the paper, no link colours).
std::string page_css(int max_width_px);

}  // namespace gd::report::detail
