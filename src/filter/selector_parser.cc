#include "filter/selector_parser.h"

#include <cerrno>
#include <cfloat>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace comet::filter {
namespace {

enum class Tok {
    kEof,
    kNot,
    kAnd,
    kOr,
    kBetween,
    kIn,
    kTrue,
    kFalse,
    kNull,
    kIs,
    kDecimal,
    kFloat,
    kString,
    kId,
    kEq,
    kNe,
    kGt,
    kGe,
    kLt,
    kLe,
    kLParen,
    kComma,
    kRParen,
    kPlus,
    kMinus,
};

struct Token {
    Tok kind = Tok::kEof;
    std::string_view image;
    size_t pos = 0;  // byte offset in the selector
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_id_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool is_id_part(char c) { return is_id_start(c) || is_digit(c); }

bool equals_ignore_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
        if (c != b[i]) {
            return false;
        }
    }
    return true;
}

std::string describe(const Token& t) {
    if (t.kind == Tok::kEof) {
        return "end of selector";
    }
    return "'" + std::string(t.image) + "'";
}

// Tokens on demand, as JavaCC's token manager hands them out: a lexical error surfaces only
// when the parser looks at that token.
class Lexer {
public:
    explicit Lexer(std::string_view text) : text_(text) {}

    // The next token, or nullopt with *error set.
    std::optional<Token> next(std::string* error) {
        skip_blanks_and_comments();
        Token t;
        t.pos = pos_;
        if (pos_ >= text_.size()) {
            t.kind = Tok::kEof;
            return t;
        }
        const char c = text_[pos_];
        size_t len = 0;
        if (c == '\'') {
            size_t i = pos_ + 1;
            while (true) {
                if (i >= text_.size()) {
                    *error = "unterminated string literal starting at " + where(pos_);
                    return std::nullopt;
                }
                if (text_[i] == '\'') {
                    if (i + 1 < text_.size() && text_[i + 1] == '\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                ++i;
            }
            t.kind = Tok::kString;
            len = i + 1 - pos_;
        } else if (is_digit(c) ||
                   (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
            const size_t dec = decimal_length();
            const size_t flt = float_length();
            t.kind = flt > dec ? Tok::kFloat : Tok::kDecimal;
            len = std::max(dec, flt);
        } else if (is_id_start(c)) {
            len = 1;
            while (pos_ + len < text_.size() && is_id_part(text_[pos_ + len])) {
                ++len;
            }
            t.kind = keyword(text_.substr(pos_, len));
        } else {
            const char n = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
            len = 1;
            switch (c) {
                case '=':
                    t.kind = Tok::kEq;
                    break;
                case '<':
                    if (n == '>') {
                        t.kind = Tok::kNe;
                        len = 2;
                    } else if (n == '=') {
                        t.kind = Tok::kLe;
                        len = 2;
                    } else {
                        t.kind = Tok::kLt;
                    }
                    break;
                case '>':
                    t.kind = n == '=' ? Tok::kGe : Tok::kGt;
                    len = n == '=' ? 2 : 1;
                    break;
                case '(':
                    t.kind = Tok::kLParen;
                    break;
                case ')':
                    t.kind = Tok::kRParen;
                    break;
                case ',':
                    t.kind = Tok::kComma;
                    break;
                case '+':
                    t.kind = Tok::kPlus;
                    break;
                case '-':
                    t.kind = Tok::kMinus;
                    break;
                default:
                    *error = fmt::format("unexpected character '{}' at {}", c, where(pos_));
                    return std::nullopt;
            }
        }
        t.image = text_.substr(pos_, len);
        pos_ += len;
        return t;
    }

    // "line L, column C" (1-based) of a byte offset.
    std::string where(size_t offset) const {
        int line = 1;
        int column = 1;
        for (size_t i = 0; i < offset && i < text_.size(); ++i) {
            const char c = text_[i];
            if (c == '\n' || (c == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n'))) {
                ++line;
                column = 1;
            } else if (c != '\r') {
                ++column;
            }
        }
        return fmt::format("line {}, column {}", line, column);
    }

private:
    static Tok keyword(std::string_view word) {
        static constexpr std::pair<std::string_view, Tok> kWords[] = {
            {"NOT", Tok::kNot},         {"AND", Tok::kAnd},   {"OR", Tok::kOr},
            {"BETWEEN", Tok::kBetween}, {"IN", Tok::kIn},     {"TRUE", Tok::kTrue},
            {"FALSE", Tok::kFalse},     {"NULL", Tok::kNull}, {"IS", Tok::kIs},
        };
        for (const auto& [w, k] : kWords) {
            if (equals_ignore_case(word, w)) {
                return k;
            }
        }
        return Tok::kId;
    }

    void skip_blanks_and_comments() {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                ++pos_;
                continue;
            }
            if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '-') {
                // A line comment counts only when a line end closes it (Java's token).
                const size_t end = text_.find_first_of("\r\n", pos_ + 2);
                if (end == std::string_view::npos) {
                    return;
                }
                pos_ = end + 1;
                continue;
            }
            if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
                const size_t end = text_.find("*/", pos_ + 2);
                if (end == std::string_view::npos) {
                    return;  // not a comment: '/' is then an unexpected character
                }
                pos_ = end + 2;
                continue;
            }
            return;
        }
    }

    size_t digits_from(size_t i) const {
        size_t n = 0;
        while (i + n < text_.size() && is_digit(text_[i + n])) {
            ++n;
        }
        return n;
    }

    // Length of an exponent [eE][+-]?[0-9]+ at i, 0 when there is none.
    size_t exponent_at(size_t i) const {
        if (i >= text_.size() || (text_[i] != 'e' && text_[i] != 'E')) {
            return 0;
        }
        size_t j = i + 1;
        if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) {
            ++j;
        }
        const size_t d = digits_from(j);
        return d == 0 ? 0 : j + d - i;
    }

    // DECIMAL_LITERAL: "0" | [1-9][0-9]* [lL]?
    size_t decimal_length() const {
        if (text_[pos_] == '0') {
            return 1;
        }
        if (!is_digit(text_[pos_])) {
            return 0;
        }
        size_t n = digits_from(pos_);
        if (pos_ + n < text_.size() && (text_[pos_ + n] == 'l' || text_[pos_ + n] == 'L')) {
            ++n;
        }
        return n;
    }

    // FLOATING_POINT_LITERAL: d+ '.' d* exp? | '.' d+ exp? | d+ exp
    size_t float_length() const {
        const size_t lead = digits_from(pos_);
        size_t i = pos_ + lead;
        if (i < text_.size() && text_[i] == '.') {
            const size_t frac = digits_from(i + 1);
            if (lead == 0 && frac == 0) {
                return 0;
            }
            i += 1 + frac;
            return i + exponent_at(i) - pos_;
        }
        if (lead == 0) {
            return 0;
        }
        const size_t e = exponent_at(i);
        return e == 0 ? 0 : i + e - pos_;
    }

    std::string_view text_;
    size_t pos_ = 0;
};

// Recursive descent over the grammar in selector_parser.h. A failed step returns nullptr with
// error_ set; nothing after it runs.
class Parser {
public:
    explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

    std::unique_ptr<Node> selector() {
        auto e = or_expression();
        if (!e) {
            return nullptr;
        }
        // No end-of-input check: RocketMQ's grammar stops after the expression.
        return as_boolean(std::move(e), 0);
    }

    const std::string& error() const { return error_; }

private:
    // The k-th token ahead (0 = next); nullptr on a lexical error.
    const Token* peek(size_t k = 0) {
        while (tokens_.size() <= cursor_ + k) {
            if (!tokens_.empty() && tokens_.back().kind == Tok::kEof) {
                return &tokens_.back();
            }
            auto t = lexer_.next(&error_);
            if (!t) {
                return nullptr;
            }
            tokens_.push_back(*t);
        }
        return &tokens_[cursor_ + k];
    }

    Token consume() {
        const Token t = tokens_[cursor_];
        if (t.kind != Tok::kEof) {
            ++cursor_;
        }
        return t;
    }

    // Consumes a token of `kind`, or fails naming what was found.
    std::optional<Token> expect(Tok kind, std::string_view what) {
        const Token* t = peek();
        if (t == nullptr) {
            return std::nullopt;
        }
        if (t->kind != kind) {
            fail(*t, fmt::format("expected {} but found {}", what, describe(*t)));
            return std::nullopt;
        }
        return consume();
    }

    std::nullptr_t fail(const Token& at, const std::string& what) { return fail_at(at.pos, what); }
    std::nullptr_t fail_at(size_t pos, const std::string& what) {
        if (error_.empty()) {
            error_ = what + " at " + lexer_.where(pos);
        }
        return nullptr;
    }

    static std::unique_ptr<Node> make(Node::Kind kind, std::unique_ptr<Node> left,
                                      std::unique_ptr<Node> right = nullptr) {
        auto n = std::make_unique<Node>();
        n->kind = kind;
        n->left = std::move(left);
        n->right = std::move(right);
        return n;
    }

    static std::unique_ptr<Node> constant(Value v, bool boolean_constant) {
        auto n = std::make_unique<Node>();
        n->value = v;
        n->boolean_constant = boolean_constant;
        return n;
    }

    // Java asBooleanExpression: boolean expressions pass, a property is cast, others fail.
    std::unique_ptr<Node> as_boolean(std::unique_ptr<Node> e, size_t pos) {
        if (e->is_boolean()) {
            return e;
        }
        if (e->kind == Node::Kind::kProperty) {
            return make(Node::Kind::kBooleanCast, std::move(e));
        }
        return fail_at(pos, "expression will not result in a boolean value: " + node_text(*e));
    }

    static std::string node_text(const Node& n) {
        if (n.kind == Node::Kind::kConstant) {
            return value_to_string(n.value);
        }
        if (n.kind == Node::Kind::kProperty) {
            return n.text;
        }
        return "an expression";
    }

    std::unique_ptr<Node> or_expression() {
        const size_t start = peek() ? peek()->pos : 0;
        auto left = and_expression();
        while (left) {
            const Token* t = peek();
            if (t == nullptr) {
                return nullptr;
            }
            if (t->kind != Tok::kOr) {
                break;
            }
            const Token op = consume();
            auto right = and_expression();
            if (!right) {
                return nullptr;
            }
            auto l = as_boolean(std::move(left), start);
            auto r = l ? as_boolean(std::move(right), op.pos) : nullptr;
            if (!r) {
                return nullptr;
            }
            left = make(Node::Kind::kOr, std::move(l), std::move(r));
        }
        return left;
    }

    std::unique_ptr<Node> and_expression() {
        const size_t start = peek() ? peek()->pos : 0;
        auto left = equality_expression();
        while (left) {
            const Token* t = peek();
            if (t == nullptr) {
                return nullptr;
            }
            if (t->kind != Tok::kAnd) {
                break;
            }
            const Token op = consume();
            auto right = equality_expression();
            if (!right) {
                return nullptr;
            }
            auto l = as_boolean(std::move(left), start);
            auto r = l ? as_boolean(std::move(right), op.pos) : nullptr;
            if (!r) {
                return nullptr;
            }
            left = make(Node::Kind::kAnd, std::move(l), std::move(r));
        }
        return left;
    }

    std::unique_ptr<Node> equality_expression() {
        auto left = comparison_expression();
        while (left) {
            const Token* t = peek();
            if (t == nullptr) {
                return nullptr;
            }
            if (t->kind == Tok::kEq || t->kind == Tok::kNe) {
                const Token op = consume();
                auto right = comparison_expression();
                if (!right) {
                    return nullptr;
                }
                left = create_equal(std::move(left), std::move(right), op);
                if (left && op.kind == Tok::kNe) {
                    left = make(Node::Kind::kNot, std::move(left));
                }
            } else if (t->kind == Tok::kIs) {
                const Token* t2 = peek(1);
                if (t2 == nullptr) {
                    return nullptr;
                }
                consume();
                bool negated = false;
                if (t2->kind != Tok::kNull) {
                    if (!expect(Tok::kNot, "NULL or NOT NULL after IS")) {
                        return nullptr;
                    }
                    negated = true;
                }
                if (!expect(Tok::kNull, "NULL")) {
                    return nullptr;
                }
                left = make(Node::Kind::kEqual, std::move(left), constant(Value(), true));
                if (negated) {
                    left = make(Node::Kind::kNot, std::move(left));
                }
            } else {
                break;
            }
        }
        return left;
    }

    // Java createEqual: NULL literals cannot be compared; TRUE/FALSE literal = non-boolean
    // literal is refused.
    std::unique_ptr<Node> create_equal(std::unique_ptr<Node> l, std::unique_ptr<Node> r,
                                       const Token& op) {
        for (const Node* side : {l.get(), r.get()}) {
            if (side->kind == Node::Kind::kConstant && side->value.index() == 0) {
                return fail(op, "NULL cannot be compared with '" + std::string(op.image) +
                                    "' (use IS NULL)");
            }
        }
        if (l->kind == Node::Kind::kConstant && r->kind == Node::Kind::kConstant &&
            l->boolean_constant && !r->boolean_constant) {
            return fail(op, value_to_string(l->value) + " cannot be compared with " +
                                value_to_string(r->value));
        }
        return make(Node::Kind::kEqual, std::move(l), std::move(r));
    }

    // Java checkLessThanOperand: a non-numeric literal or a boolean expression cannot be an
    // operand of > >= < <=.
    bool check_ordered_operand(const Node& e, const Token& op) {
        if (e.kind == Node::Kind::kConstant) {
            const size_t t = e.value.index();
            if (t == 2 || t == 3 || t == 4) {  // Integer, Long, Double
                return true;
            }
            fail(op, "value " + value_to_string(e.value) + " cannot be compared with '" +
                         std::string(op.image) + "'");
            return false;
        }
        if (e.is_boolean()) {
            fail(op, "a condition cannot be compared with '" + std::string(op.image) + "'");
            return false;
        }
        return true;
    }

    std::unique_ptr<Node> ordered(Node::Kind kind, std::unique_ptr<Node> l, std::unique_ptr<Node> r,
                                  const Token& op) {
        if (!check_ordered_operand(*l, op) || !check_ordered_operand(*r, op)) {
            return nullptr;
        }
        return make(kind, std::move(l), std::move(r));
    }

    // Java deep-copies nothing: BETWEEN uses the value expression twice. A copy of the (pure)
    // subtree is equivalent.
    static std::unique_ptr<Node> clone(const Node& n) {
        auto c = std::make_unique<Node>();
        c->kind = n.kind;
        c->boolean_constant = n.boolean_constant;
        c->text = n.text;
        c->negated = n.negated;
        c->list = n.list;
        c->value = n.value;
        if (n.value.index() == 5) {  // a string literal: view its own copy
            c->value = std::string_view(c->text);
        }
        c->left = n.left ? clone(*n.left) : nullptr;
        c->right = n.right ? clone(*n.right) : nullptr;
        return c;
    }

    std::unique_ptr<Node> between(std::unique_ptr<Node> value, bool negated, const Token& op) {
        auto low = unary_expression();
        if (!low || !expect(Tok::kAnd, "AND of BETWEEN")) {
            return nullptr;
        }
        auto high = unary_expression();
        if (!high) {
            return nullptr;
        }
        if (negated) {
            auto copy = clone(*value);
            auto lt = ordered(Node::Kind::kLess, std::move(value), std::move(low), op);
            auto gt =
                lt ? ordered(Node::Kind::kGreater, std::move(copy), std::move(high), op) : nullptr;
            return gt ? make(Node::Kind::kOr, std::move(lt), std::move(gt)) : nullptr;
        }
        if (low->kind == Node::Kind::kConstant && high->kind == Node::Kind::kConstant) {
            if (low->value.index() == 0 || high->value.index() == 0) {
                return fail(op, "illegal values of BETWEEN: values can not be NULL");
            }
            auto c = compare_values(high->value, low->value);
            if (!c) {
                return fail(op, "illegal values of BETWEEN: " + value_to_string(low->value) +
                                    " and " + value_to_string(high->value) + " cannot be compared");
            }
            if (*c < 0) {
                return fail(op, "illegal values of BETWEEN: left value " +
                                    value_to_string(low->value) +
                                    " must be less than or equal to right value " +
                                    value_to_string(high->value));
            }
        }
        auto copy = clone(*value);
        auto ge = ordered(Node::Kind::kGreaterEqual, std::move(value), std::move(low), op);
        auto le =
            ge ? ordered(Node::Kind::kLessEqual, std::move(copy), std::move(high), op) : nullptr;
        return le ? make(Node::Kind::kAnd, std::move(ge), std::move(le)) : nullptr;
    }

    std::unique_ptr<Node> in_list(std::unique_ptr<Node> value, bool negated, const Token& op) {
        if (!expect(Tok::kLParen, "'(' after IN")) {
            return nullptr;
        }
        std::vector<std::string> items;
        while (true) {
            auto s = expect(Tok::kString, "a string literal in the IN list");
            if (!s) {
                return nullptr;
            }
            items.push_back(unquote(s->image));
            const Token* t = peek();
            if (t == nullptr) {
                return nullptr;
            }
            if (t->kind != Tok::kComma) {
                break;
            }
            consume();
        }
        if (!expect(Tok::kRParen, "',' or ')' in the IN list")) {
            return nullptr;
        }
        if (value->kind != Node::Kind::kProperty) {
            return fail(op, "expected a property for IN, got " + node_text(*value));
        }
        auto n = make(Node::Kind::kIn, std::move(value));
        n->negated = negated;
        n->list = std::move(items);
        return n;
    }

    std::unique_ptr<Node> comparison_expression() {
        auto left = unary_expression();
        while (left) {
            const Token* t = peek();
            if (t == nullptr) {
                return nullptr;
            }
            Node::Kind kind;
            switch (t->kind) {
                case Tok::kGt:
                    kind = Node::Kind::kGreater;
                    break;
                case Tok::kGe:
                    kind = Node::Kind::kGreaterEqual;
                    break;
                case Tok::kLt:
                    kind = Node::Kind::kLess;
                    break;
                case Tok::kLe:
                    kind = Node::Kind::kLessEqual;
                    break;
                case Tok::kBetween: {
                    const Token op = consume();
                    left = between(std::move(left), false, op);
                    continue;
                }
                case Tok::kIn: {
                    const Token op = consume();
                    left = in_list(std::move(left), false, op);
                    continue;
                }
                case Tok::kNot: {
                    const Token* t2 = peek(1);
                    if (t2 == nullptr) {
                        return nullptr;
                    }
                    if (t2->kind != Tok::kBetween && t2->kind != Tok::kIn) {
                        return fail(*t2,
                                    "expected BETWEEN or IN after NOT but found " + describe(*t2));
                    }
                    consume();
                    const Token op = consume();
                    left = op.kind == Tok::kBetween ? between(std::move(left), true, op)
                                                    : in_list(std::move(left), true, op);
                    continue;
                }
                default:
                    return left;
            }
            const Token op = consume();
            auto right = unary_expression();
            if (!right) {
                return nullptr;
            }
            left = ordered(kind, std::move(left), std::move(right), op);
        }
        return left;
    }

    std::unique_ptr<Node> unary_expression() {
        const Token* t = peek();
        if (t == nullptr) {
            return nullptr;
        }
        if (t->kind == Tok::kPlus) {
            consume();
            return unary_expression();
        }
        if (t->kind == Tok::kMinus) {
            consume();
            auto e = unary_expression();
            return e ? make(Node::Kind::kNegate, std::move(e)) : nullptr;
        }
        if (t->kind == Tok::kNot) {
            const Token op = consume();
            auto e = unary_expression();
            if (!e) {
                return nullptr;
            }
            auto b = as_boolean(std::move(e), op.pos);
            return b ? make(Node::Kind::kNot, std::move(b)) : nullptr;
        }
        return primary_expression();
    }

    static std::string unquote(std::string_view image) {
        std::string s;
        for (size_t i = 1; i + 1 < image.size(); ++i) {
            s += image[i];
            if (image[i] == '\'') {
                ++i;  // '' stands for one quote
            }
        }
        return s;
    }

    std::unique_ptr<Node> primary_expression() {
        const Token* tp = peek();
        if (tp == nullptr) {
            return nullptr;
        }
        const Token t = *tp;
        switch (t.kind) {
            case Tok::kString: {
                consume();
                auto n = std::make_unique<Node>();
                n->text = unquote(t.image);
                n->value = std::string_view(n->text);
                return n;
            }
            case Tok::kDecimal:
                consume();
                return decimal(t);
            case Tok::kFloat:
                consume();
                return floating(t);
            case Tok::kTrue:
                consume();
                return constant(true, true);
            case Tok::kFalse:
                consume();
                return constant(false, true);
            case Tok::kNull:
                consume();
                return constant(Value(), true);
            case Tok::kId: {
                consume();
                auto n = std::make_unique<Node>();
                n->kind = Node::Kind::kProperty;
                n->text = std::string(t.image);
                return n;
            }
            case Tok::kLParen: {
                consume();
                auto e = or_expression();
                if (!e || !expect(Tok::kRParen, "')'")) {
                    return nullptr;
                }
                return e;
            }
            default:
                return fail(t, "unexpected " + describe(t));
        }
    }

    // Java ConstantExpression.createFromDecimal: Integer when it fits, else Long.
    std::unique_ptr<Node> decimal(const Token& t) {
        std::string_view digits = t.image;
        if (digits.back() == 'l' || digits.back() == 'L') {
            digits.remove_suffix(1);
        }
        auto v = java_parse_long(digits);
        if (!v) {
            return fail(t, "integer " + std::string(t.image) + " is out of range");
        }
        if (*v >= INT32_MIN && *v <= INT32_MAX) {
            return constant(static_cast<int32_t>(*v), false);
        }
        return constant(*v, false);
    }

    // Java ConstantExpression.createFloat: refuses values above Double.MAX_VALUE and below
    // Double.MIN_VALUE (so 0.0 too, as RocketMQ 4.9.8 does).
    std::unique_ptr<Node> floating(const Token& t) {
        const std::string text(t.image);
        const double v = std::strtod(text.c_str(), nullptr);
        if (v > DBL_MAX) {
            return fail(t, text + " is greater than Double.MAX_VALUE");
        }
        if (v < DBL_TRUE_MIN) {
            return fail(t, text + " is less than Double.MIN_VALUE (4.9E-324)");
        }
        return constant(v, false);
    }

    std::string_view text_;
    Lexer lexer_;
    std::vector<Token> tokens_;
    size_t cursor_ = 0;
    std::string error_;
};

}  // namespace

Result<std::shared_ptr<const Expression>> compile_selector(std::string_view sql) {
    Parser p(sql);
    auto root = p.selector();
    if (!root) {
        return Status::error(Errc::kInvalidArgument, "Invalid MessageSelector: {}", p.error());
    }
    return std::shared_ptr<const Expression>(
        std::make_shared<Expression>(std::move(root), std::string(sql)));
}

}  // namespace comet::filter
