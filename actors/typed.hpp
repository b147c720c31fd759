// Typed actor interfaces under CAF 0.17: an actor's behavior built from
// parts (each a caf::make_typed_behavior of some of its handlers), checked
// at compile time to handle exactly the messages of its interface.
//
// CAF 0.17 checks a typed_behavior only when every handler is given in one
// constructor call, and a typed_behavior has no or_else: an actor whose
// handlers live in several files (the RunnerSet actor) composes them here.
#pragma once

#include <caf/all.hpp>
#include <utility>

namespace octorun {

template <class Interface, class... Parts>
typename Interface::behavior_type compose_behavior(Parts... parts) {
  using found = typename caf::detail::tl_concat<typename Parts::signatures...>::type;
  using mismatch = caf::interface_mismatch_t<found, typename Interface::signatures>;
  static_assert(mismatch::value == caf::detail::tl_size<found>::value,
                "the parts do not handle exactly the messages of the interface");
  caf::behavior all;
  auto add = [&](caf::behavior part) {
    all = all ? caf::message_handler{all.as_behavior_impl()}.or_else(std::move(part)) : std::move(part);
  };
  (add(std::move(parts.unbox())), ...);
  return {typename Interface::behavior_type::unsafe_init{}, std::move(all)};
}

}  // namespace octorun
