#include "interop/moe_layer_freq.h"

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "interop/layout_common.h"
#include "sim/error.h"

namespace cc {

namespace {

// More entries than any model has layers (ModelSpec::validate: at most 10,000) is refused before
// a repetition builds it; integers stay far inside 64 bits.
constexpr std::int64_t kMaxEntries = 10'000;
constexpr std::int64_t kMaxInteger = 1'000'000'000;

// A Python value the expression can make: an int, a list or a tuple (of values).
struct Value {
  enum Kind { Int, List, Tuple } kind = Int;
  std::int64_t n = 0;
  std::vector<Value> items;
};

const char* type_name(const Value& v) { return v.kind == Value::Int ? "int" : v.kind == Value::List ? "list" : "tuple"; }

// A recursive-descent evaluator over Python's grammar for these characters: sums of products of
// powers of atoms (integers, list and tuple displays, parenthesised expressions) with unary +
// and subscripts, at Python's precedence.
class Evaluator {
 public:
  Evaluator(const std::string& text, const std::string& flag, const std::string& where)
      : s_(text), flag_(flag), where_(where) {}

  Value run() {
    Value v = expression();
    if (pos_ != s_.size()) error("invalid syntax at '{}'", s_.substr(pos_));
    return v;
  }

 private:
  template <class... A>
  [[noreturn]] void error(fmt::format_string<A...> what, A&&... args) {
    fail_at(flag_, "{}{} '{}' is not a value Megatron-LM reads: {} (Python evaluates it); give an integer N or a "
            "list of 0 (dense) and 1 (MoE), one per layer, e.g. ([0]*3+[1]*58)",
            interop::prefix(where_), flag_, s_, fmt::format(what, std::forward<A>(args)...));
  }
  bool eat(const char* token) {
    const std::string t(token);
    if (s_.compare(pos_, t.size(), t) != 0) return false;
    // '*' is not the start of '**'.
    if (t == "*" && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') return false;
    pos_ += t.size();
    return true;
  }
  std::int64_t checked(std::int64_t n) {
    if (n > kMaxInteger) error("{} is beyond what a layer pattern needs", n);
    return n;
  }
  Value expression() {
    Value v = term();
    while (eat("+")) v = add(v, term());
    return v;
  }
  Value term() {
    Value v = power();
    while (eat("*")) v = multiply(v, power());
    return v;
  }
  Value power() {
    Value base = unary();
    if (!eat("**")) return base;
    const Value exponent = power();  // right-associative, and above unary + on its right
    if (base.kind != Value::Int || exponent.kind != Value::Int)
      error("unsupported operand types for **: '{}' and '{}'", type_name(base), type_name(exponent));
    std::int64_t r = 1;
    for (std::int64_t i = 0; i < exponent.n; ++i) {
      if (base.n > 1 && r > kMaxInteger / base.n) error("{}**{} is beyond what a layer pattern needs", base.n, exponent.n);
      r *= base.n;
      if (base.n <= 1) break;  // 0 or 1 to any positive power
    }
    if (exponent.n > 0 && base.n == 0) r = 0;
    return Value{Value::Int, r, {}};
  }
  Value unary() {
    if (eat("+")) {
      Value v = unary();
      if (v.kind != Value::Int) error("bad operand type for unary +: '{}'", type_name(v));
      return v;
    }
    return subscripted(atom());
  }
  Value subscripted(Value v) {
    while (eat("[")) {
      const Value index = expression();
      if (!eat("]")) error("'[' was never closed");
      if (v.kind == Value::Int) error("'int' object is not subscriptable");
      if (index.kind != Value::Int) error("indices must be integers, not {}", type_name(index));
      if (index.n >= static_cast<std::int64_t>(v.items.size())) error("index {} out of range", index.n);
      Value picked = v.items[static_cast<std::size_t>(index.n)];
      v = std::move(picked);
    }
    return v;
  }
  Value atom() {
    if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') return integer();
    for (const auto& [open, close, kind] : {std::tuple{"[", "]", Value::List}, std::tuple{"(", ")", Value::Tuple}}) {
      if (!eat(open)) continue;
      Value v{kind, 0, {}};
      bool comma = false;
      while (!eat(close)) {
        if (!v.items.empty() && !comma) error("invalid syntax: ',' expected at '{}'", s_.substr(pos_));
        if (pos_ >= s_.size()) error("'{}' was never closed", open);
        v.items.push_back(expression());
        comma = eat(",");
      }
      // (x) is x; (x,) and () are tuples.
      if (kind == Value::Tuple && v.items.size() == 1 && !comma) return v.items.front();
      return v;
    }
    error("invalid syntax at '{}'", pos_ < s_.size() ? s_.substr(pos_) : "the end");
  }
  Value integer() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    const std::string digits = s_.substr(start, pos_ - start);
    // Python 3 refuses leading zeros in a decimal literal, except in zero itself ("00").
    if (digits.size() > 1 && digits.front() == '0' && digits.find_first_not_of('0') != std::string::npos)
      error("leading zeros in decimal integer literals are not permitted ('{}')", digits);
    if (digits.size() > 10) error("{} is beyond what a layer pattern needs", digits);
    return Value{Value::Int, checked(std::stoll(digits)), {}};
  }
  Value add(const Value& a, const Value& b) {
    if (a.kind == Value::Int && b.kind == Value::Int) return Value{Value::Int, checked(a.n + b.n), {}};
    if (a.kind != b.kind || a.kind == Value::Int)
      error("can only concatenate {0} (not \"{1}\") to {0}", type_name(a), type_name(b));
    Value v = a;
    if (static_cast<std::int64_t>(a.items.size() + b.items.size()) > kMaxEntries)
      error("more than {} entries, the most layers a model may have", kMaxEntries);
    v.items.insert(v.items.end(), b.items.begin(), b.items.end());
    return v;
  }
  Value multiply(const Value& a, const Value& b) {
    if (a.kind == Value::Int && b.kind == Value::Int) {
      if (a.n != 0 && b.n > kMaxInteger / a.n) error("{}*{} is beyond what a layer pattern needs", a.n, b.n);
      return Value{Value::Int, a.n * b.n, {}};
    }
    if (a.kind != Value::Int && b.kind != Value::Int)
      error("can't multiply sequence by non-int of type '{}'", type_name(b));
    const Value& seq = a.kind == Value::Int ? b : a;
    const std::int64_t times = a.kind == Value::Int ? a.n : b.n;
    Value v{seq.kind, 0, {}};
    if (times > 0 && !seq.items.empty() && static_cast<std::int64_t>(seq.items.size()) > kMaxEntries / times)
      error("more than {} entries, the most layers a model may have", kMaxEntries);
    for (std::int64_t i = 0; i < times; ++i) v.items.insert(v.items.end(), seq.items.begin(), seq.items.end());
    return v;
  }

  const std::string& s_;
  const std::string& flag_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

}  // namespace

void moe_layer_freq_from(const std::string& text, MoeSpec& moe, const std::string& flag, const std::string& where) {
  if (text.find('[') == std::string::npos) {  // moe_freq_type: int(x)
    moe.layer_freq = interop::to_int(text, flag, where);
    moe.layer_pattern.clear();
    return;
  }
  // _eval_pattern: only these characters reach Python's eval.
  const std::size_t bad = text.find_first_not_of("0123456789,[]()+*");
  if (bad != std::string::npos)
    fail_at(flag,
            "{}{} '{}' holds '{}', which Megatron-LM refuses in a pattern (only digits, commas, brackets, "
            "parentheses, + and *; no spaces or quotes); e.g. ([0]*3+[1]*58)",
            interop::prefix(where), flag, text, text[bad]);
  const Value v = Evaluator(text, flag, where).run();
  if (v.kind == Value::Int) {  // e.g. "[2][0]": Megatron-Core takes the int
    moe.layer_freq = static_cast<int>(v.n);
    moe.layer_pattern.clear();
    return;
  }
  if (v.kind == Value::Tuple)
    fail_at(flag, "{}{} '{}' is a tuple; Megatron-Core takes an integer or a list (write [...] around it)",
            interop::prefix(where), flag, text);
  moe.layer_pattern.clear();
  for (const Value& item : v.items) {
    if (item.kind != Value::Int)
      fail_at(flag, "{}{} '{}' holds a {} entry; each entry must be 0 (dense) or 1 (MoE)", interop::prefix(where),
              flag, text, type_name(item));
    moe.layer_pattern.push_back(item.n == 0 ? 0 : item.n == 1 ? 1 : 2);
  }
}

std::string moe_layer_freq_text(const MoeSpec& moe) {
  if (moe.layer_pattern.empty()) return std::to_string(moe.layer_freq);
  std::string out = "(";
  const auto& p = moe.layer_pattern;
  for (std::size_t i = 0; i < p.size();) {
    std::size_t j = i;
    while (j < p.size() && p[j] == p[i]) ++j;
    out += fmt::format("{}[{}]*{}", i == 0 ? "" : "+", p[i], j - i);
    i = j;
  }
  return out + ")";
}

}  // namespace cc
