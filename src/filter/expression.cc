#include "filter/expression.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace comet::filter {
namespace {

enum Type { kNull = 0, kBool, kInt, kLong, kDouble, kString };

Type type_of(const Value& v) { return static_cast<Type>(v.index()); }

// Java Double.compare: -0.0 < 0.0, NaN equal to itself and above everything.
int java_double_compare(double a, double b) {
    if (a < b) {
        return -1;
    }
    if (a > b) {
        return 1;
    }
    const bool an = std::isnan(a);
    const bool bn = std::isnan(b);
    if (an || bn) {
        return an == bn ? 0 : (an ? 1 : -1);
    }
    const bool as = std::signbit(a);
    const bool bs = std::signbit(b);
    return as == bs ? 0 : (as ? -1 : 1);
}

template <typename T>
int three_way(T a, T b) {
    return a < b ? -1 : (a > b ? 1 : 0);
}

// Same-type compareTo (Boolean: false < true; String: lexicographic).
int compare_same(const Value& l, const Value& r) {
    switch (type_of(l)) {
        case kBool:
            return three_way<int>(std::get<bool>(l), std::get<bool>(r));
        case kInt:
            return three_way(std::get<int32_t>(l), std::get<int32_t>(r));
        case kLong:
            return three_way(std::get<int64_t>(l), std::get<int64_t>(r));
        case kDouble:
            return java_double_compare(std::get<double>(l), std::get<double>(r));
        case kString: {
            const int c = std::get<std::string_view>(l).compare(std::get<std::string_view>(r));
            return three_way(c, 0);
        }
        case kNull:
            break;
    }
    return 0;
}

// Java Boolean.valueOf(String): true only for "true" in any case.
bool java_parse_boolean(std::string_view s) {
    if (s.size() != 4) {
        return false;
    }
    static constexpr std::string_view kTrue = "true";
    for (size_t i = 0; i < 4; ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
        if (c != kTrue[i]) {
            return false;
        }
    }
    return true;
}

// Java's equals(): same class and value (Double by bits: NaN equals NaN, 0.0 is not -0.0).
bool java_equals(const Value& l, const Value& r) {
    if (l.index() != r.index()) {
        return false;
    }
    if (type_of(l) == kDouble) {
        const double a = std::get<double>(l);
        const double b = std::get<double>(r);
        if (std::isnan(a) || std::isnan(b)) {
            return std::isnan(a) && std::isnan(b);
        }
        return a == b && std::signbit(a) == std::signbit(b);
    }
    return l == r;
}

bool is_null(const Value& v) { return type_of(v) == kNull; }

struct Evaluator {
    const EvaluationContext& ctx;

    // False where Java's evaluate() throws; *out set otherwise.
    bool eval(const Node& n, Value* out) const {
        switch (n.kind) {
            case Node::Kind::kConstant:
                *out = n.value;
                return true;
            case Node::Kind::kProperty: {
                auto v = ctx.get(n.text);
                *out = v ? Value(*v) : Value();
                return true;
            }
            case Node::Kind::kNegate:
                return negate(n, out);
            case Node::Kind::kNot: {
                Value v;
                if (!eval(*n.left, &v)) {
                    return false;
                }
                if (is_null(v)) {
                    *out = Value();
                    return true;
                }
                if (type_of(v) != kBool) {
                    return false;  // Java: ClassCastException
                }
                *out = !std::get<bool>(v);
                return true;
            }
            case Node::Kind::kBooleanCast: {
                Value v;
                if (!eval(*n.left, &v)) {
                    return false;
                }
                if (is_null(v)) {
                    *out = Value();
                } else {
                    *out = type_of(v) == kBool && std::get<bool>(v);
                }
                return true;
            }
            case Node::Kind::kIn: {
                Value v;
                if (!eval(*n.left, &v)) {
                    return false;
                }
                if (type_of(v) != kString) {
                    *out = Value();  // NULL, or not a String
                    return true;
                }
                bool found = false;
                for (const auto& s : n.list) {
                    found = found || s == std::get<std::string_view>(v);
                }
                *out = found != n.negated;
                return true;
            }
            case Node::Kind::kAnd:
            case Node::Kind::kOr:
                return logic(n, out);
            case Node::Kind::kEqual:
                return equal(n, out);
            case Node::Kind::kGreater:
            case Node::Kind::kGreaterEqual:
            case Node::Kind::kLess:
            case Node::Kind::kLessEqual:
                return ordered(n, out);
        }
        return false;
    }

    bool negate(const Node& n, Value* out) const {
        Value v;
        if (!eval(*n.left, &v)) {
            return false;
        }
        switch (type_of(v)) {
            case kInt:  // Java int / long negation wraps
                *out = static_cast<int32_t>(0u - static_cast<uint32_t>(std::get<int32_t>(v)));
                return true;
            case kLong:
                *out = static_cast<int64_t>(0ull - static_cast<uint64_t>(std::get<int64_t>(v)));
                return true;
            case kDouble:
                *out = -std::get<double>(v);
                return true;
            default:
                *out = Value();  // NULL, or not a Number
                return true;
        }
    }

    // Reads a boolean operand of AND / OR: nullopt for NULL.
    bool boolean_operand(const Node& n, std::optional<bool>* out) const {
        Value v;
        if (!eval(n, &v)) {
            return false;
        }
        if (is_null(v)) {
            *out = std::nullopt;
            return true;
        }
        if (type_of(v) != kBool) {
            return false;  // Java: ClassCastException
        }
        *out = std::get<bool>(v);
        return true;
    }

    // Java LogicExpression: the right side is skipped when the left decides.
    bool logic(const Node& n, Value* out) const {
        const bool decisive = n.kind == Node::Kind::kOr;  // OR: TRUE decides; AND: FALSE
        std::optional<bool> l;
        if (!boolean_operand(*n.left, &l)) {
            return false;
        }
        if (l == decisive) {
            *out = decisive;
            return true;
        }
        std::optional<bool> r;
        if (!boolean_operand(*n.right, &r)) {
            return false;
        }
        if (r == decisive) {
            *out = decisive;
        } else if (!l.has_value() || !r.has_value()) {
            *out = Value();
        } else {
            *out = !decisive;
        }
        return true;
    }

    // Java doCreateEqual: NULL = x is NULL, x = NULL is FALSE, NULL = NULL is TRUE.
    bool equal(const Node& n, Value* out) const {
        Value l;
        Value r;
        if (!eval(*n.left, &l) || !eval(*n.right, &r)) {
            return false;
        }
        if (is_null(l) != is_null(r)) {
            *out = is_null(l) ? Value() : Value(false);
            return true;
        }
        if (is_null(l) || java_equals(l, r)) {
            *out = true;
            return true;
        }
        auto c = compare_values(l, r);
        if (!c) {
            return false;
        }
        *out = *c == 0;
        return true;
    }

    // Java ComparisonExpression.evaluate for > >= < <=: NULL on either side gives NULL; two
    // Strings are compared as doubles (a String that is not one throws).
    bool ordered(const Node& n, Value* out) const {
        Value l;
        if (!eval(*n.left, &l)) {
            return false;
        }
        if (is_null(l)) {
            *out = Value();
            return true;
        }
        Value r;
        if (!eval(*n.right, &r)) {
            return false;
        }
        if (is_null(r)) {
            *out = Value();
            return true;
        }
        std::optional<int> c;
        if (type_of(l) == kString && type_of(r) == kString) {
            auto ld = java_parse_double(std::get<std::string_view>(l));
            auto rd = java_parse_double(std::get<std::string_view>(r));
            if (!ld || !rd) {
                return false;
            }
            c = java_double_compare(*ld, *rd);
        } else {
            c = compare_values(l, r);
        }
        if (!c) {
            return false;
        }
        switch (n.kind) {
            case Node::Kind::kGreater:
                *out = *c > 0;
                break;
            case Node::Kind::kGreaterEqual:
                *out = *c >= 0;
                break;
            case Node::Kind::kLess:
                *out = *c < 0;
                break;
            default:
                *out = *c <= 0;
                break;
        }
        return true;
    }
};

std::string double_to_string(double d) {
    if (std::isnan(d)) {
        return "NaN";
    }
    if (std::isinf(d)) {
        return d > 0 ? "Infinity" : "-Infinity";
    }
    std::string s = fmt::format("{}", d);
    if (s.find_first_of(".en") == std::string::npos) {
        s += ".0";
    }
    return s;
}

std::string node_to_string(const Node& n) {
    auto bin = [&n](std::string_view sym) {
        return fmt::format("({} {} {})", node_to_string(*n.left), sym, node_to_string(*n.right));
    };
    switch (n.kind) {
        case Node::Kind::kConstant:
            return value_to_string(n.value);
        case Node::Kind::kProperty:
            return n.text;
        case Node::Kind::kNegate:
            return "(- " + node_to_string(*n.left) + ")";
        case Node::Kind::kNot:
            return "(NOT " + node_to_string(*n.left) + ")";
        case Node::Kind::kBooleanCast:
            return node_to_string(*n.left);
        case Node::Kind::kIn: {
            std::string s = node_to_string(*n.left) + (n.negated ? " NOT IN ( " : " IN ( ");
            for (size_t i = 0; i < n.list.size(); ++i) {
                s += (i == 0 ? "" : ", ") + n.list[i];
            }
            return s + " )";
        }
        case Node::Kind::kAnd:
            return bin("&&");
        case Node::Kind::kOr:
            return bin("||");
        case Node::Kind::kEqual:
            return bin("==");
        case Node::Kind::kGreater:
            return bin(">");
        case Node::Kind::kGreaterEqual:
            return bin(">=");
        case Node::Kind::kLess:
            return bin("<");
        case Node::Kind::kLessEqual:
            return bin("<=");
    }
    return "?";
}

template <typename T>
std::optional<T> java_parse_integral(std::string_view s) {
    if (s.empty()) {
        return std::nullopt;
    }
    bool negative = false;
    size_t i = 0;
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        i = 1;
        if (s.size() == 1) {
            return std::nullopt;
        }
    }
    // Accumulate negatively, as Java does, so that the minimum value parses.
    const int64_t limit = negative ? static_cast<int64_t>(std::numeric_limits<T>::min())
                                   : -static_cast<int64_t>(std::numeric_limits<T>::max());
    int64_t acc = 0;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        const int digit = c - '0';
        if (acc < limit / 10) {
            return std::nullopt;
        }
        acc *= 10;
        if (acc < limit + digit) {
            return std::nullopt;
        }
        acc -= digit;
    }
    return static_cast<T>(negative ? acc : -acc);
}

}  // namespace

std::optional<int> compare_values(const Value& l, const Value& r) {
    const Type lt = type_of(l);
    const Type rt = type_of(r);
    if (lt == rt) {
        return compare_same(l, r);
    }
    const auto as_string = [](const Value& v) { return std::get<std::string_view>(v); };
    switch (lt) {
        case kBool:
            // Java casts the Boolean to String here: ClassCastException.
            if (rt == kString) {
                return std::nullopt;
            }
            return -1;
        case kInt: {
            const int32_t a = std::get<int32_t>(l);
            if (rt == kLong) {
                return three_way<int64_t>(a, std::get<int64_t>(r));
            }
            if (rt == kDouble) {
                return java_double_compare(a, std::get<double>(r));
            }
            if (rt == kString) {
                auto b = java_parse_int(as_string(r));
                return b ? std::optional<int>(three_way(a, *b)) : std::nullopt;
            }
            return -1;
        }
        case kLong: {
            const int64_t a = std::get<int64_t>(l);
            if (rt == kInt) {
                return three_way<int64_t>(a, std::get<int32_t>(r));
            }
            if (rt == kDouble) {
                return java_double_compare(static_cast<double>(a), std::get<double>(r));
            }
            if (rt == kString) {
                auto b = java_parse_long(as_string(r));
                return b ? std::optional<int>(three_way(a, *b)) : std::nullopt;
            }
            return -1;
        }
        case kDouble: {
            const double a = std::get<double>(l);
            if (rt == kInt) {
                return java_double_compare(a, std::get<int32_t>(r));
            }
            if (rt == kLong) {
                return java_double_compare(a, static_cast<double>(std::get<int64_t>(r)));
            }
            if (rt == kString) {
                auto b = java_parse_double(as_string(r));
                return b ? std::optional<int>(java_double_compare(a, *b)) : std::nullopt;
            }
            return -1;
        }
        case kString: {
            const std::string_view a = as_string(l);
            switch (rt) {
                case kBool:
                    return three_way<int>(java_parse_boolean(a), std::get<bool>(r));
                case kInt: {
                    auto v = java_parse_int(a);
                    return v ? std::optional<int>(three_way(*v, std::get<int32_t>(r)))
                             : std::nullopt;
                }
                case kLong: {
                    auto v = java_parse_long(a);
                    return v ? std::optional<int>(three_way(*v, std::get<int64_t>(r)))
                             : std::nullopt;
                }
                case kDouble: {
                    auto v = java_parse_double(a);
                    return v ? std::optional<int>(java_double_compare(*v, std::get<double>(r)))
                             : std::nullopt;
                }
                default:
                    return -1;
            }
        }
        case kNull:
            break;
    }
    return -1;
}

std::optional<int32_t> java_parse_int(std::string_view s) {
    return java_parse_integral<int32_t>(s);
}

std::optional<int64_t> java_parse_long(std::string_view s) {
    return java_parse_integral<int64_t>(s);
}

std::optional<double> java_parse_double(std::string_view s) {
    while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') {
        s.remove_prefix(1);
    }
    while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') {
        s.remove_suffix(1);
    }
    std::string_view body = s;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        negative = body[0] == '-';
        body.remove_prefix(1);
    }
    if (body == "NaN") {
        return std::nan("");
    }
    if (body == "Infinity") {
        return negative ? -HUGE_VAL : HUGE_VAL;
    }
    if (!body.empty() &&
        (body.back() == 'f' || body.back() == 'F' || body.back() == 'd' || body.back() == 'D')) {
        body.remove_suffix(1);
    }
    size_t i = 0;
    size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
        ++i;
        ++digits;
    }
    if (i < body.size() && body[i] == '.') {
        ++i;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++digits;
        }
    }
    if (digits == 0) {
        return std::nullopt;
    }
    if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
        ++i;
        if (i < body.size() && (body[i] == '+' || body[i] == '-')) {
            ++i;
        }
        size_t exp_digits = 0;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++exp_digits;
        }
        if (exp_digits == 0) {
            return std::nullopt;
        }
    }
    if (i != body.size()) {
        return std::nullopt;
    }
    const std::string text(body);
    const double v = std::strtod(text.c_str(), nullptr);  // overflow: inf; underflow: 0
    return negative ? -v : v;
}

std::string value_to_string(const Value& v) {
    switch (type_of(v)) {
        case kNull:
            return "NULL";
        case kBool:
            return std::get<bool>(v) ? "TRUE" : "FALSE";
        case kInt:
            return std::to_string(std::get<int32_t>(v));
        case kLong:
            return std::to_string(std::get<int64_t>(v));
        case kDouble:
            return double_to_string(std::get<double>(v));
        case kString: {
            std::string s = "'";
            for (char c : std::get<std::string_view>(v)) {
                if (c == '\'') {
                    s += '\'';
                }
                s += c;
            }
            return s + "'";
        }
    }
    return "?";
}

EvalResult Expression::evaluate(const EvaluationContext& ctx) const {
    Value v;
    if (!Evaluator{ctx}.eval(*root_, &v)) {
        return EvalResult::kError;
    }
    if (is_null(v)) {
        return EvalResult::kNull;
    }
    if (type_of(v) != kBool) {
        return EvalResult::kError;  // not a Boolean: never a match
    }
    return std::get<bool>(v) ? EvalResult::kTrue : EvalResult::kFalse;
}

std::string Expression::to_string() const { return node_to_string(*root_); }

}  // namespace comet::filter
