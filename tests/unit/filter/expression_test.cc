// Evaluation of SQL92 selectors against message properties, with RocketMQ 4.9.8's results:
// three-valued logic (NULL for a missing property), Strings converted to the literal's
// number type (and an error, so no match, when they do not convert), short-circuit AND/OR.
#include "filter/expression.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "filter/selector_parser.h"

namespace comet::filter {
namespace {

class MapContext final : public EvaluationContext {
public:
    explicit MapContext(std::map<std::string, std::string> props) : props_(std::move(props)) {}
    std::optional<std::string_view> get(std::string_view name) const override {
        auto it = props_.find(std::string(name));
        if (it == props_.end()) {
            return std::nullopt;
        }
        return std::string_view(it->second);
    }

private:
    std::map<std::string, std::string> props_;
};

constexpr EvalResult T = EvalResult::kTrue;
constexpr EvalResult F = EvalResult::kFalse;
constexpr EvalResult N = EvalResult::kNull;
constexpr EvalResult E = EvalResult::kError;

struct Case {
    const char* sql;
    EvalResult expected;
};

TEST(ExpressionTest, EvaluatesLikeRocketMq) {
    const MapContext ctx({{"a", "5"},
                          {"b", "abc"},
                          {"f", "2.5"},
                          {"t", "TRUE"},
                          {"big", "3000000000"},
                          {"neg", "-7"},
                          {"plus", "+5"},
                          {"w", " 7 "},
                          {"s", "it's"},
                          {"TAGS", "TagA"},
                          {"KEYS", "k1"}});
    const Case cases[] = {
        // String property against numbers: converted to the literal's type.
        {"a = 5", T},
        {"a = '5'", T},
        {"a = 6", F},
        {"a > 3", T},
        {"a < 3", F},
        {"a >= 5", T},
        {"a <= 4", F},
        {"a > 4.5", T},
        {"a = 5.0", T},
        {"a <> 6", T},
        {"a = +5", T},
        {"plus = 5", T},
        {"neg < 0", T},
        {"neg = -7", T},
        {"f = 2.5", T},
        {"f > 2.0", T},
        {"f > 2", E},             // Integer.valueOf("2.5") throws
        {"big > 5", E},           // beyond Integer
        {"big > 2147483648", T},  // a Long literal: Long.valueOf
        {"big > 5.5", T},
        {"w > 6.5", T},  // Double.valueOf trims blanks
        {"w > 6", E},    // Integer.valueOf does not
        {"b = 5", E},
        {"b > 5", E},
        {"b = 'abc'", T},
        {"s = 'it''s'", T},
        {"TAGS = 'TagA'", T},
        {"KEYS = 'k1'", T},
        // Missing properties: NULL, never a match; IS [NOT] NULL decides.
        {"missing = 5", N},
        {"missing > 5", N},
        {"missing <> 5", N},
        {"NOT (missing = 5)", N},
        {"missing IS NULL", T},
        {"missing IS NOT NULL", F},
        {"a IS NULL", F},
        {"a IS NOT NULL", T},
        {"missing BETWEEN 1 AND 5", N},
        {"missing IN ('x')", N},
        {"missing NOT IN ('x')", N},
        {"missing", N},
        {"-missing = 5", N},
        // Three-valued AND / OR, left to right with short circuit (an error on the right of a
        // decided side never happens).
        {"missing = 5 OR a = 5", T},
        {"missing = 5 OR a = 6", N},
        {"missing = 5 AND a = 5", N},
        {"missing = 5 AND a = 6", F},
        {"a = 5 OR b = 5", T},
        {"b = 5 OR a = 5", E},
        {"a = 6 AND b = 5", F},
        {"NOT (a = 6)", T},
        {"NOT (a = 5)", F},
        // BETWEEN / IN.
        {"a BETWEEN 1 AND 5", T},
        {"a BETWEEN 6 AND 9", F},
        {"a NOT BETWEEN 6 AND 9", T},
        {"a NOT BETWEEN 1 AND 9", F},
        {"a BETWEEN -1 AND 5.5", T},
        {"TAGS IN ('TagA', 'TagB')", T},
        {"TAGS IN ('TagB', 'TagC', 'TagD', 'TagE', 'TagF')", F},
        {"TAGS NOT IN ('TagA')", F},
        {"TAGS NOT IN ('TagB')", T},
        // Booleans.
        {"t = TRUE", T},  // Boolean.valueOf("TRUE")
        {"a = TRUE", F},
        {"TRUE = t", E},  // Java casts the Boolean to a String: ClassCastException
        {"t", F},         // a String property is not a Boolean
        {"TRUE", T},
        {"FALSE", F},
        {"NULL", N},
        {"NOT a = 1", F},  // (NOT a) = 1: Boolean against Integer
        {"1 = TRUE", F},
        // Property against property.
        {"a = b", F},
        {"a = missing", F},  // x = NULL is FALSE ...
        {"missing = a", N},  // ... NULL = x is NULL
        {"missing = other", T},
        {"a > f", T},  // two Strings: compared as doubles
        {"a > b", E},
        // Constants.
        {"5 = 5.0", T},
        {"2147483648 > 5", T},
        {"'x' = 'x'", T},
    };
    for (const auto& c : cases) {
        auto compiled = compile_selector(c.sql);
        ASSERT_TRUE(compiled.is_ok()) << c.sql << ": " << compiled.status().message();
        EXPECT_EQ(compiled.value()->evaluate(ctx), c.expected) << c.sql;
        EXPECT_EQ(compiled.value()->matches(ctx), c.expected == T) << c.sql;
    }
}

TEST(ExpressionTest, JavaNumberParsing) {
    EXPECT_EQ(java_parse_int("2147483647"), 2147483647);
    EXPECT_EQ(java_parse_int("-2147483648"), INT32_MIN);
    EXPECT_EQ(java_parse_int("+12"), 12);
    EXPECT_EQ(java_parse_int("007"), 7);
    EXPECT_EQ(java_parse_int("2147483648"), std::nullopt);
    EXPECT_EQ(java_parse_int("-2147483649"), std::nullopt);
    EXPECT_EQ(java_parse_int(""), std::nullopt);
    EXPECT_EQ(java_parse_int("-"), std::nullopt);
    EXPECT_EQ(java_parse_int(" 1"), std::nullopt);
    EXPECT_EQ(java_parse_int("1.0"), std::nullopt);
    EXPECT_EQ(java_parse_long("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(java_parse_long("-9223372036854775808"), INT64_MIN);
    EXPECT_EQ(java_parse_long("9223372036854775808"), std::nullopt);
    EXPECT_EQ(java_parse_double("2.5"), 2.5);
    EXPECT_EQ(java_parse_double(" -2.5e1 "), -25.0);
    EXPECT_EQ(java_parse_double("1."), 1.0);
    EXPECT_EQ(java_parse_double(".5"), 0.5);
    EXPECT_EQ(java_parse_double("3f"), 3.0);
    EXPECT_EQ(java_parse_double("3D"), 3.0);
    EXPECT_EQ(java_parse_double("Infinity"), HUGE_VAL);
    EXPECT_TRUE(std::isnan(*java_parse_double("NaN")));
    EXPECT_EQ(java_parse_double("1e"), std::nullopt);
    EXPECT_EQ(java_parse_double("."), std::nullopt);
    EXPECT_EQ(java_parse_double("abc"), std::nullopt);
    EXPECT_EQ(java_parse_double(""), std::nullopt);
    EXPECT_EQ(java_parse_double("1,5"), std::nullopt);
}

TEST(ExpressionTest, CompareValuesFollowsJavaConversions) {
    using namespace std::string_view_literals;
    EXPECT_EQ(compare_values(int32_t{1}, int64_t{2}), -1);
    EXPECT_EQ(compare_values(int64_t{3}, int32_t{2}), 1);
    EXPECT_EQ(compare_values(int32_t{2}, 2.0), 0);
    EXPECT_EQ(compare_values(2.5, int64_t{2}), 1);
    EXPECT_EQ(compare_values("10"sv, int32_t{9}), 1);
    EXPECT_EQ(compare_values("x"sv, int32_t{9}), std::nullopt);
    EXPECT_EQ(compare_values("true"sv, true), 0);
    EXPECT_EQ(compare_values(true, "true"sv), std::nullopt);
    EXPECT_EQ(compare_values(true, int32_t{1}), -1);
    EXPECT_EQ(compare_values(int32_t{1}, true), -1);
    EXPECT_EQ(compare_values(-0.0, 0.0), -1);
    EXPECT_EQ(compare_values(std::nan(""), 1.0), 1);
}

}  // namespace
}  // namespace comet::filter
