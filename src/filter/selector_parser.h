#pragma once
// SelectorParser: compiles RocketMQ's SQL92 message selector (4.9.8 SelectorParser.jj) into an
// Expression. Pure and thread-safe (no shared state).
//
// Grammar (keywords case-insensitive; precedence low to high):
//   selector   := or                                  (must yield a boolean; a bare property
//                                                      is cast to one)
//   or         := and (OR and)*
//   and        := equality (AND equality)*
//   equality   := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
//   comparison := unary ( ('>'|'>='|'<'|'<=') unary | [NOT] BETWEEN unary AND unary
//                       | [NOT] IN '(' string (',' string)* ')' )*
//   unary      := '+' unary | '-' unary | NOT unary | primary
//   primary    := string | integer | float | TRUE | FALSE | NULL | identifier | '(' or ')'
// Literals: 'it''s' (quote doubled); integers 0 or [1-9][0-9]*[lL]? (Integer when they fit,
// else Long; beyond Long a compile error); floats 1.5 / 1. / .5 / 1e3 (Double; 0.0 and values
// below Double.MIN_VALUE are refused, as in Java). Identifiers [A-Za-z_$][A-Za-z0-9_$]* name
// message properties (user ones and system ones such as TAGS, KEYS). Comments: -- to a line
// end, /* */.
// 4.9.8 quirks kept: NOT binds tighter than comparisons ("NOT a = 1" is "(NOT a) = 1"; write
// "NOT (a = 1)"); text after a complete selector is ignored once its first token lexes
// ("a = 1 b" compiles as "a = 1"); CONTAINS / STARTSWITH / ENDSWITH are RocketMQ 5 and are not
// operators here.

#include <memory>
#include <string_view>

#include "base/status.h"
#include "filter/expression.h"

namespace comet::filter {

// Errors: kInvalidArgument, the message naming the problem and its line and column (1-based),
// e.g. "Invalid MessageSelector: unexpected ')' at line 1, column 7".
Result<std::shared_ptr<const Expression>> compile_selector(std::string_view sql);

}  // namespace comet::filter
