// Compilation of SQL92 selectors: what RocketMQ 4.9.8's SelectorParser accepts (with the tree
// it builds, in Java's toString form) and what it refuses (with the position).
#include "filter/selector_parser.h"

#include <gtest/gtest.h>

namespace comet::filter {
namespace {

struct Accepted {
    const char* sql;
    const char* tree;
};

TEST(SelectorParserTest, AcceptsRocketMqGrammar) {
    const Accepted cases[] = {
        {"a = 1", "(a == 1)"},
        {"a <> 'x'", "(NOT (a == 'x'))"},
        {"a > 5 AND b < 2.5", "((a > 5) && (b < 2.5))"},
        {"a >= 1 or b <= 2", "((a >= 1) || (b <= 2))"},
        {"a = 1 OR b = 2 AND c = 3", "((a == 1) || ((b == 2) && (c == 3)))"},
        {"(a = 1 OR b = 2) AND c = 3", "(((a == 1) || (b == 2)) && (c == 3))"},
        {"a BETWEEN 1 AND 10", "((a >= 1) && (a <= 10))"},
        {"a NOT BETWEEN 1 AND 10", "((a < 1) || (a > 10))"},
        {"a BETWEEN -5 AND 5", "((a >= (- 5)) && (a <= 5))"},
        {"TAGS IN ('a', 'b')", "TAGS IN ( a, b )"},
        {"TAGS NOT IN ('a')", "TAGS NOT IN ( a )"},
        {"a IS NULL", "(a == NULL)"},
        {"a IS NOT NULL", "(NOT (a == NULL))"},
        {"NOT (a = 1)", "(NOT (a == 1))"},
        {"NOT a = 1", "((NOT a) == 1)"},  // 4.9.8: NOT binds tighter than '='
        {"a", "a"},
        {"TRUE", "TRUE"},
        {"false", "FALSE"},
        {"NULL", "NULL"},
        {"s = 'it''s'", "(s == 'it''s')"},
        {"a = 2147483647", "(a == 2147483647)"},
        {"a = 2147483648", "(a == 2147483648)"},
        {"a = 10L", "(a == 10)"},
        {"a > 1.5e3", "(a > 1500.0)"},
        {"a > .5", "(a > 0.5)"},
        {"a > 5.", "(a > 5.0)"},
        {"a = +3", "(a == 3)"},
        {"$x_1 = 'v'", "($x_1 == 'v')"},
        {"a = TRUE", "(a == TRUE)"},
        {"1 = TRUE", "(1 == TRUE)"},
        {"a = b", "(a == b)"},
        {"a = 1 /* comment */ AND b = 2", "((a == 1) && (b == 2))"},
        {"a = 1 -- comment\n AND b = 2", "((a == 1) && (b == 2))"},
        {"a = 1\r\nAND\tb = 2", "((a == 1) && (b == 2))"},
        // Text after a complete selector is ignored, as by RocketMQ's generated parser.
        {"a = 1 b = 2", "(a == 1)"},
        {"a = 1)", "(a == 1)"},
        {"a = 1 -- a comment needs a line end, else it is two minus signs", "(a == 1)"},
    };
    for (const auto& c : cases) {
        auto r = compile_selector(c.sql);
        ASSERT_TRUE(r.is_ok()) << c.sql << ": " << r.status().message();
        EXPECT_EQ(r.value()->to_string(), c.tree) << c.sql;
        EXPECT_EQ(r.value()->text(), c.sql);
    }
}

struct Refused {
    const char* sql;
    const char* message;
};

TEST(SelectorParserTest, RefusesWithPosition) {
    const Refused cases[] = {
        {"", "Invalid MessageSelector: unexpected end of selector at line 1, column 1"},
        {"a =", "Invalid MessageSelector: unexpected end of selector at line 1, column 4"},
        {"a = 1 AND", "Invalid MessageSelector: unexpected end of selector at line 1, column 10"},
        {"(a = 1",
         "Invalid MessageSelector: expected ')' but found end of selector at line 1, "
         "column 7"},
        {"a = 'x",
         "Invalid MessageSelector: unterminated string literal starting at line 1, "
         "column 5"},
        {"a = 1 #", "Invalid MessageSelector: unexpected character '#' at line 1, column 7"},
        {"a\n= #", "Invalid MessageSelector: unexpected character '#' at line 2, column 3"},
        {"a = NULL",
         "Invalid MessageSelector: NULL cannot be compared with '=' (use IS NULL) "
         "at line 1, column 3"},
        {"a > 'x'",
         "Invalid MessageSelector: value 'x' cannot be compared with '>' at line 1, "
         "column 3"},
        {"a < TRUE",
         "Invalid MessageSelector: value TRUE cannot be compared with '<' at line "
         "1, column 3"},
        {"(a = 1) > 2",
         "Invalid MessageSelector: a condition cannot be compared with '>' at "
         "line 1, column 9"},
        {"NOT a > 1",
         "Invalid MessageSelector: a condition cannot be compared with '>' at line "
         "1, column 7"},
        {"TRUE = 1",
         "Invalid MessageSelector: TRUE cannot be compared with 1 at line 1, "
         "column 6"},
        {"a BETWEEN 5 AND 1",
         "Invalid MessageSelector: illegal values of BETWEEN: left value 5 "
         "must be less than or equal to right value 1 at line 1, column 3"},
        {"a BETWEEN NULL AND 1",
         "Invalid MessageSelector: illegal values of BETWEEN: values "
         "can not be NULL at line 1, column 3"},
        {"a BETWEEN 'a' AND 'b'",
         "Invalid MessageSelector: value 'a' cannot be compared with "
         "'BETWEEN' at line 1, column 3"},
        {"a BETWEEN 1 OR 2",
         "Invalid MessageSelector: expected AND of BETWEEN but found 'OR' "
         "at line 1, column 13"},
        {"a IN ()",
         "Invalid MessageSelector: expected a string literal in the IN list but found "
         "')' at line 1, column 7"},
        {"a IN (1)",
         "Invalid MessageSelector: expected a string literal in the IN list but "
         "found '1' at line 1, column 7"},
        {"'x' IN ('x')",
         "Invalid MessageSelector: expected a property for IN, got 'x' at line "
         "1, column 5"},
        {"a NOT LIKE 'x'",
         "Invalid MessageSelector: expected BETWEEN or IN after NOT but found "
         "'LIKE' at line 1, column 7"},
        {"a IS 5",
         "Invalid MessageSelector: expected NULL or NOT NULL after IS but found '5' "
         "at line 1, column 6"},
        {"5",
         "Invalid MessageSelector: expression will not result in a boolean value: 5 at "
         "line 1, column 1"},
        {"a = 9223372036854775808",
         "Invalid MessageSelector: integer 9223372036854775808 is "
         "out of range at line 1, column 5"},
        {"a > 0.0",
         "Invalid MessageSelector: 0.0 is less than Double.MIN_VALUE (4.9E-324) at "
         "line 1, column 5"},
        {"a > 1e400",
         "Invalid MessageSelector: 1e400 is greater than Double.MAX_VALUE at line "
         "1, column 5"},
    };
    for (const auto& c : cases) {
        auto r = compile_selector(c.sql);
        ASSERT_FALSE(r.is_ok()) << c.sql;
        EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
        EXPECT_EQ(r.status().message(), c.message) << c.sql;
    }
}

}  // namespace
}  // namespace comet::filter

namespace comet::filter {
namespace {

// Robustness: random token soups and random bytes either compile or fail with a message; what
// compiles evaluates to one of the four results. Fixed seed, so a failure replays.
TEST(SelectorParserTest, RandomInputNeverCrashes) {
    const char* const pieces[] = {
        "a",          "b",     "TAGS",    "=",   "<>",      ">",
        ">=",         "<",     "<=",      "AND", "OR",      "NOT",
        "(",          ")",     ",",       "IN",  "IS",      "NULL",
        "TRUE",       "FALSE", "BETWEEN", "'x'", "'it''s'", "1",
        "2147483648", "1.5",   ".5",      "1e3", "-",       "+",
        "0",          "--c\n", "/*c*/",   "'",   "#",       "9223372036854775808"};
    class Ctx final : public EvaluationContext {
    public:
        std::optional<std::string_view> get(std::string_view name) const override {
            if (name == "a") {
                return "5";
            }
            if (name == "TAGS") {
                return "x";
            }
            return std::nullopt;
        }
    } ctx;
    uint64_t state = 12345;
    auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<uint32_t>(state >> 33);
    };
    int compiled = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string sql;
        const uint32_t n = 1 + next() % 12;
        for (uint32_t i = 0; i < n; ++i) {
            if (round % 5 == 0) {
                sql += static_cast<char>(next() % 256);
            } else {
                sql += pieces[next() % (sizeof(pieces) / sizeof(pieces[0]))];
                sql += ' ';
            }
        }
        auto r = compile_selector(sql);
        if (!r.is_ok()) {
            EXPECT_EQ(r.status().message().rfind("Invalid MessageSelector: ", 0), 0u) << sql;
            continue;
        }
        ++compiled;
        const EvalResult e = r.value()->evaluate(ctx);
        EXPECT_TRUE(e == EvalResult::kTrue || e == EvalResult::kFalse || e == EvalResult::kNull ||
                    e == EvalResult::kError);
    }
    EXPECT_GT(compiled, 100);
}

}  // namespace
}  // namespace comet::filter
