#pragma once
// A compiled SQL92 message selector (Java org.apache.rocketmq.filter.expression.*, RocketMQ
// 4.9.8) and its evaluator. Built only by SelectorParser (selector_parser.h); immutable after
// that, so one instance may be evaluated by any number of threads at once.
//
// Values follow Java's boxed types: NULL, Boolean, Integer, Long, Double and String. Every
// message property is a String (or NULL when absent). Evaluation is three-valued: a comparison
// with NULL is NULL, AND/OR/NOT follow SQL's rules, and only TRUE matches. Where Java's
// expression throws at run time (a String property that is not a number compared with a
// number, a Boolean literal compared with a property), the whole evaluation fails and the
// message does not match, as RocketMQ's ExpressionMessageFilter catches and drops it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace comet::filter {

// Java's Boolean / Integer / Long / Double / String, or null (monostate). A string is a view:
// into the expression's own text for literals, into the message for properties.
using Value = std::variant<std::monostate, bool, int32_t, int64_t, double, std::string_view>;

// Where property values come from (Java EvaluationContext). get() returns nullopt for an absent
// property; the view must stay valid for the evaluation.
class EvaluationContext {
public:
    virtual ~EvaluationContext() = default;
    virtual std::optional<std::string_view> get(std::string_view name) const = 0;
};

// One node of the expression tree. Kinds mirror the Java classes: constants
// (ConstantExpression, and BooleanConstantExpression for TRUE/FALSE/NULL), PropertyExpression,
// UnaryExpression (negate, NOT, boolean cast, IN), LogicExpression (AND/OR) and
// ComparisonExpression (=, >, >=, <, <=). <>, IS [NOT] NULL and [NOT] BETWEEN are built from
// these exactly as Java builds them.
struct Node {
    enum class Kind {
        kConstant,     // value; boolean_constant for TRUE / FALSE / NULL
        kProperty,     // name
        kNegate,       // -child
        kNot,          // NOT child (a boolean expression)
        kBooleanCast,  // a bare property used as a condition
        kIn,           // child IN (list), or NOT IN when negated
        kAnd,
        kOr,
        kEqual,  // Java doCreateEqual
        kGreater,
        kGreaterEqual,
        kLess,
        kLessEqual,
    };
    Kind kind = Kind::kConstant;
    Value value;                    // kConstant
    bool boolean_constant = false;  // kConstant: TRUE, FALSE or NULL
    std::string text;               // kProperty: the name; kConstant string: the storage
    bool negated = false;           // kIn: NOT IN
    std::vector<std::string> list;  // kIn
    std::unique_ptr<Node> left;     // the operand of unary kinds
    std::unique_ptr<Node> right;

    // Java "instanceof BooleanExpression".
    bool is_boolean() const {
        switch (kind) {
            case Kind::kConstant:
                return boolean_constant;
            case Kind::kProperty:
            case Kind::kNegate:
                return false;
            default:
                return true;
        }
    }
};

// The result of an evaluation: TRUE, FALSE, NULL (unknown), or kError when Java's expression
// would have thrown.
enum class EvalResult { kTrue, kFalse, kNull, kError };

class Expression {
public:
    explicit Expression(std::unique_ptr<Node> root, std::string text)
        : root_(std::move(root)), text_(std::move(text)) {}

    EvalResult evaluate(const EvaluationContext& ctx) const;
    // Java ExpressionMessageFilter: only TRUE matches (NULL, FALSE and errors do not).
    bool matches(const EvaluationContext& ctx) const { return evaluate(ctx) == EvalResult::kTrue; }
    // The selector as compiled (the consumer's text).
    const std::string& text() const { return text_; }
    // Java's toString() of the tree, e.g. "((a > 5) && (b IN ( 'x' )))"; for logs and tests.
    std::string to_string() const;

private:
    std::unique_ptr<Node> root_;
    std::string text_;
};

// Java ComparisonExpression.__compare with string conversion on: nullopt where Java throws.
// Requires: neither value is null.
std::optional<int> compare_values(const Value& l, const Value& r);
// Java Integer.valueOf / Long.valueOf / Double.valueOf of a String; nullopt on
// NumberFormatException. Double accepts Java's syntax: surrounding whitespace, a sign, digits
// with an optional point and exponent, an optional f/F/d/D suffix, NaN and Infinity.
std::optional<int32_t> java_parse_int(std::string_view s);
std::optional<int64_t> java_parse_long(std::string_view s);
std::optional<double> java_parse_double(std::string_view s);
// Java's toString of a value (for messages): NULL, TRUE/FALSE, quoted strings, numbers.
std::string value_to_string(const Value& v);

}  // namespace comet::filter
