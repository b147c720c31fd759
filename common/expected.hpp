// A small value-or-error type: adapters return API and transport failures as
// values (never exceptions across actor boundaries). C++20 has no std::expected.
#pragma once

#include <cstdlib>
#include <utility>
#include <variant>

namespace octorun {

// A constructor, not an aggregate: `unexpected(e)` and `unexpected{e}` both
// build on every compiler we use (clang 14 has no parenthesised aggregate
// initialisation, so an aggregate failed there with the first spelling only).
template <class E>
struct unexpected {
  explicit unexpected(E e) : error(std::move(e)) {}
  E error;
};
template <class E>
unexpected(E) -> unexpected<E>;

template <class T, class E>
class expected {
 public:
  expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}            // NOLINT: implicit by design
  expected(unexpected<E> u) : v_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  // Reaching for the wrong alternative is a programming error, not bad input.
  T& value() & { return (require(0), std::get<0>(v_)); }
  const T& value() const& { return (require(0), std::get<0>(v_)); }
  T&& value() && { return (require(0), std::get<0>(std::move(v_))); }
  E& error() & { return (require(1), std::get<1>(v_)); }
  const E& error() const& { return (require(1), std::get<1>(v_)); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void require(std::size_t index) const {
    if (v_.index() != index) std::abort();
  }
  std::variant<T, E> v_;
};

// expected<void, E>: success carries nothing.
struct ok_t {};
inline constexpr ok_t ok{};

}  // namespace octorun
