// Parity with the authors' code (docs/coarsen.md, "Parity") on the goldens in
// ../shared/data/<dataset>/nope_golden/. Skipped when the shared data is absent (failed under
// BIRKHOFF_REQUIRE_SHARED=1, see shared_data.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/io/npy.hpp"
#include "birkhoff/io/npz.hpp"
#include "shared_data.hpp"

namespace birkhoff::coarsen {
namespace {

const std::string kData = birkhoff::tests::shared_data_dir();

struct Dataset {
  io::NpyArray x, e;
  graph::AttributedGraph g;
};

/// Loads (once) the dataset, or returns null when the shared data is absent.
const Dataset* load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Dataset>> cache;
  auto& slot = cache[name];
  if (!slot) {
    const std::string dir = kData + "/" + name;
    if (!std::filesystem::exists(dir + "/features.npy")) return nullptr;
    slot = std::make_unique<Dataset>();
    slot->x = io::read_npy(dir + "/features.npy");
    slot->e = io::read_npy(dir + "/edge_index.npy");
    const auto xs = slot->x.as<float>("features");
    const auto es = slot->e.as<std::int64_t>("edge_index");
    slot->g = graph::from_edge_index({es.data(), 2, slot->e.shape[1]},
                                     {xs.data(), slot->x.shape[0], slot->x.shape[1]});
  }
  return slot.get();
}

struct Golden {
  std::vector<std::int64_t> merges;
  std::vector<double> losses;
  std::vector<std::int64_t> final_ids;
  std::int64_t target = 0;
  std::int64_t heap_pushes = -1;
};

Golden golden(const std::string& name, const std::string& variant, const std::string& ratio) {
  const std::string file = name + "/nope_golden/" + variant + "_r" + ratio + ".npz";
  const auto z = io::read_npz(kData + "/" + file);
  Golden g;
  const auto m = z.at("merges").as<std::int64_t>("merges");
  g.merges.assign(m.begin(), m.end());
  const auto l = z.at("losses").as<double>("losses");
  g.losses.assign(l.begin(), l.end());
  const auto f = z.at("final_node_ids").as<std::int64_t>("final_node_ids");
  g.final_ids.assign(f.begin(), f.end());
  g.target = z.at("target").as<std::int64_t>("target")[0];
  std::ifstream in(kData + "/golden_runs.json");
  const auto runs = nlohmann::json::parse(in).at("runs");
  for (const auto& run : runs) {
    if (run.at("file").get<std::string>() == file) g.heap_pushes = run.at("heap_pushes");
  }
  return g;
}

using LeafSet = std::vector<std::int64_t>;

/// Leaf set of every id in a merge list (ids < N are singletons).
std::vector<LeafSet> leaf_sets(std::int64_t n, const std::vector<std::int64_t>& merges) {
  std::vector<LeafSet> leaves(static_cast<std::size_t>(n + merges.size() / 3));
  for (std::int64_t i = 0; i < n; ++i) leaves[i] = {i};
  for (std::size_t t = 0; t < merges.size() / 3; ++t) {
    auto& dst = leaves[merges[3 * t]];
    const auto& a = leaves[merges[3 * t + 1]];
    const auto& b = leaves[merges[3 * t + 2]];
    dst.resize(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), dst.begin());
  }
  return leaves;
}

/// Each merge as the unordered pair of leaf sets it joins.
std::set<std::pair<LeafSet, LeafSet>> merge_events(std::int64_t n,
                                                   const std::vector<std::int64_t>& merges) {
  const auto leaves = leaf_sets(n, merges);
  std::set<std::pair<LeafSet, LeafSet>> events;
  for (std::size_t t = 0; t < merges.size() / 3; ++t) {
    auto a = leaves[merges[3 * t + 1]];
    auto b = leaves[merges[3 * t + 2]];
    if (b < a) std::swap(a, b);
    events.insert({a, b});
  }
  return events;
}

std::set<LeafSet> partition(std::int64_t n, const std::vector<std::int64_t>& merges,
                            const std::vector<std::int64_t>& roots) {
  const auto leaves = leaf_sets(n, merges);
  std::set<LeafSet> parts;
  for (const auto r : roots) parts.insert(leaves[r]);
  return parts;
}

bool close(double a, double b, double rtol) {
  return std::abs(a - b) <= rtol * std::max(std::abs(a), std::abs(b)) + 1e-12;
}

using Case = std::tuple<std::string, std::string>;

class GoldenParity : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenParity, NopeStarEqualsTheGoldenExactly) {
  const auto& [name, ratio] = GetParam();
  const Dataset* ds = load(name);
  if (!ds) BIRKHOFF_SKIP_WITHOUT_SHARED_DATA(kData + "/" + name);
  const Golden gold = golden(name, "nopestar", ratio);
  NopeOptions o;
  o.method = Method::NopeStar;
  o.ratio = std::stod(ratio);
  const auto r = nope(ds->g, o);
  EXPECT_EQ(r.target, gold.target);
  ASSERT_EQ(r.merges.size(), gold.merges.size());
  EXPECT_EQ(r.merges, gold.merges);
  ASSERT_EQ(r.keys.size(), gold.losses.size());
  std::int64_t differing = 0;
  for (std::size_t t = 0; t < r.keys.size(); ++t) {
    differing += static_cast<float>(r.keys[t]) != static_cast<float>(gold.losses[t]);
  }
  EXPECT_EQ(differing, 0) << "keys differing from the golden (compared as float32)";
  EXPECT_EQ(cut(r, ds->g).roots, gold.final_ids);
  EXPECT_EQ(r.heap_pushes, gold.heap_pushes);
  EXPECT_EQ(r.reached_target, static_cast<std::int64_t>(gold.final_ids.size()) == gold.target);
}

TEST_P(GoldenParity, NopeMatchesTheGoldenUpToNearTies) {
  const auto& [name, ratio] = GetParam();
  const Dataset* ds = load(name);
  if (!ds) BIRKHOFF_SKIP_WITHOUT_SHARED_DATA(kData + "/" + name);
  const Golden gold = golden(name, "nope", ratio);
  NopeOptions o;
  o.method = Method::Nope;
  o.ratio = std::stod(ratio);
  const auto r = nope(ds->g, o);
  const std::int64_t n = ds->g.num_nodes;
  ASSERT_EQ(r.merges.size(), gold.merges.size());
  // (a) the same merge events, (b) the same final partition.
  EXPECT_TRUE(merge_events(n, r.merges) == merge_events(n, gold.merges));
  EXPECT_TRUE(partition(n, r.merges, cut(r, ds->g).roots) ==
              partition(n, gold.merges, gold.final_ids));
  // (c) keys within 1e-5 relative up to and including the first differing merge.
  std::size_t first_diff = r.keys.size();
  for (std::size_t t = 0; t < r.keys.size(); ++t) {
    if (!std::equal(r.merges.begin() + 3 * t, r.merges.begin() + 3 * t + 3,
                    gold.merges.begin() + 3 * t)) {
      first_diff = t;
      break;
    }
  }
  double worst = 0.0;
  for (std::size_t t = 0; t <= std::min(first_diff, r.keys.size() - 1); ++t) {
    EXPECT_TRUE(close(r.keys[t], gold.losses[t], 1e-5))
        << "merge " << t << ": " << r.keys[t] << " vs golden " << gold.losses[t];
    const double scale = std::max(std::abs(r.keys[t]), std::abs(gold.losses[t]));
    if (scale > 0) worst = std::max(worst, std::abs(r.keys[t] - gold.losses[t]) / scale);
  }
  RecordProperty("identical_prefix", static_cast<int>(first_diff));
  RecordProperty("worst_relative_key_gap", std::to_string(worst));
  std::cout << "[          ] " << name << " r=" << ratio << ": identical merges " << first_diff
            << " / " << r.keys.size() << ", worst relative key gap " << worst << "\n";
}

TEST_P(GoldenParity, CutOfTheSmallestRatioRunEqualsTheDirectRun) {
  const auto& [name, ratio] = GetParam();
  const Dataset* ds = load(name);
  if (!ds) BIRKHOFF_SKIP_WITHOUT_SHARED_DATA(kData + "/" + name);
  NopeOptions o;
  o.method = Method::NopeStar;
  o.ratio = 0.1;
  const auto fine = nope(ds->g, o);
  o.ratio = std::stod(ratio);
  const auto direct = nope(ds->g, o);
  const auto tree = prefix(fine, target_for_ratio(ds->g.num_nodes, o.ratio));
  EXPECT_EQ(tree.merges, direct.merges);
  const auto c = cut(tree, ds->g), d = cut(direct, ds->g);
  EXPECT_EQ(c.assignment, d.assignment);
  EXPECT_EQ(c.edge_index, d.edge_index);
  EXPECT_EQ(c.features, d.features);
}

TEST(GoldenData, ResultDoesNotDependOnTheThreadCount) {
  const Dataset* ds = load("cora");
  if (!ds) BIRKHOFF_SKIP_WITHOUT_SHARED_DATA(kData + "/cora");
  for (const Method v : {Method::Nope, Method::NopeStar}) {
    NopeOptions a;
    a.method = v;
    a.ratio = 0.3;
    NopeOptions b = a;
    a.num_threads = 1;
    b.num_threads = 2;
    const auto ra = nope(ds->g, a);
    const auto rb = nope(ds->g, b);
    EXPECT_EQ(ra.merges, rb.merges);
    EXPECT_EQ(ra.keys, rb.keys);
    const auto ca = cut(ra, ds->g, {true, 1}), cb = cut(rb, ds->g, {true, 2});
    EXPECT_EQ(ca.features, cb.features);
    EXPECT_EQ(ca.edge_index, cb.edge_index);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, GoldenParity,
                         ::testing::Combine(::testing::Values("cora", "citeseer"),
                                            ::testing::Values("0.1", "0.3", "0.5")),
                         [](const auto& param_info) {
                           std::string r = std::get<1>(param_info.param);
                           r.erase(std::remove(r.begin(), r.end(), '.'), r.end());
                           return std::get<0>(param_info.param) + "_r" + r;
                         });

}  // namespace
}  // namespace birkhoff::coarsen
