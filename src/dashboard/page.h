#pragma once
// The dashboard's one page: plain HTML, CSS and JavaScript compiled into the binary (no build
// step, no external assets). The script polls /api/cluster, /api/topics, /api/groups and
// /api/history and rewrites the sections in place; a member that stops answering shows with
// class "down" and the text DOWN. Layout of the DOM the tests read: docs/dashboard.md.

#include <string_view>

namespace comet::dashboard {

std::string_view page_html();

}  // namespace comet::dashboard
