// The costs every front end can name. A cost is registered by one entry of BIRKHOFF_COSTS; its
// file in costs/ defines make_<name>(p, scale), p unset when the caller gave none.
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/cost.hpp"

#define BIRKHOFF_COSTS(X) X(sqeuclidean) X(euclidean) X(cosine)

namespace birkhoff::transport {
namespace costs {
#define BIRKHOFF_DECLARE(name) \
  std::shared_ptr<const GroundCost> make_##name(std::optional<double> p, double scale);
BIRKHOFF_COSTS(BIRKHOFF_DECLARE)
#undef BIRKHOFF_DECLARE
}  // namespace costs

namespace {

struct Entry {
  const char* name;
  std::shared_ptr<const GroundCost> (*make)(std::optional<double> p, double scale);
};

#define BIRKHOFF_ENTRY(name) Entry{#name, &costs::make_##name},
constexpr Entry kRegistry[] = {BIRKHOFF_COSTS(BIRKHOFF_ENTRY)};
#undef BIRKHOFF_ENTRY

}  // namespace

Cost Cost::named(std::string_view name, std::optional<double> p, double scale) {
  for (const auto& e : kRegistry)
    if (name == e.name) return Cost(e.make(p, scale));
  std::string known;
  for (const auto& e : kRegistry) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw InvalidInput("cost: unknown cost '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> cost_names() {
  std::vector<std::string> out;
  for (const auto& e : kRegistry) out.emplace_back(e.name);
  return out;
}

}  // namespace birkhoff::transport
