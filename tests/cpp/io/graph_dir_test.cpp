#include "birkhoff/io/graph_dir.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "npy_files.hpp"

namespace birkhoff::io {
namespace {

namespace fs = std::filesystem;
using testing::byte_swapped;
using testing::npy_file;
using testing::to_fortran;
using testing::write_file;

class AGraphDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_path(::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void put(const std::string& file, const std::vector<std::byte>& bytes) {
    write_file(dir_ + "/" + file, bytes);
  }
  static std::string message_for(const std::string& path, const GraphDirOptions& options = {}) {
    try {
      read_graph_dir(path, options);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "no exception";
  }
  std::string message(const GraphDirOptions& options = {}) { return message_for(dir_, options); }
  std::string dir_;
};

TEST_F(AGraphDir, ReadsEveryFileConvertingToTheFormatsDtypes) {
  // float64 features, an int32 Fortran-ordered edge list, float32 weights, big-endian labels.
  const std::vector<std::int64_t> e_shape = {2, 3};
  put("features.npy", npy_file("<f8", false, {3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6}));
  put("edge_index.npy", npy_file("<i4", true, e_shape,
                                 to_fortran(std::vector<std::int32_t>{0, 1, 2, 1, 2, 0}, e_shape)));
  put("edge_weight.npy", npy_file("<f4", false, {3}, std::vector<float>{0.5f, 1, 2}));
  put("labels.npy", npy_file(">i8", false, {3}, byte_swapped(std::vector<std::int64_t>{2, 0, 1})));
  GraphDirOptions options;
  options.labels = true;
  const GraphDir g = read_graph_dir(dir_, options);
  EXPECT_EQ(g.files, (std::vector<std::string>{"edge_index.npy", "edge_weight.npy", "features.npy",
                                               "labels.npy"}));
  const auto x = g.features_view();
  EXPECT_EQ(x.rows, 3);
  EXPECT_EQ(x.cols, 2);
  EXPECT_EQ(x(2, 1), 6.0f);
  const auto e = g.edge_index_view();
  EXPECT_EQ(e.cols, 3);
  EXPECT_EQ(std::vector<std::int64_t>(e.data, e.data + 6),
            (std::vector<std::int64_t>{0, 1, 2, 1, 2, 0}));
  EXPECT_EQ(g.edge_weight_view()[0], 0.5);
  EXPECT_EQ(g.labels_view()[0], 2);
  EXPECT_EQ(g.converted, (std::map<std::string, std::string>{{"edge_index", "int32->int64"},
                                                             {"edge_weight", "float32->float64"},
                                                             {"features", "float64->float32"}}));
  EXPECT_FALSE(g.adjacency.has_value());
}

TEST_F(AGraphDir, EdgeLessGraphsAndUnsignedIdsAreRead) {
  put("features.npy", npy_file("<f4", false, {4, 1}, std::vector<float>{1, 2, 3, 4}));
  put("edge_index.npy", npy_file("<i8", false, {2, 0}, std::vector<std::int64_t>{}));
  EXPECT_EQ(read_graph_dir(dir_).edge_index_view().cols, 0);
  put("edge_index.npy", npy_file("<u2", false, {2, 1}, std::vector<std::uint16_t>{3, 65535}));
  EXPECT_EQ(read_graph_dir(dir_).edge_index_view()(1, 0), 65535);
}

TEST_F(AGraphDir, FeaturesAreOptionalAndTheirAbsenceIsExplained) {
  put("edge_index.npy", npy_file("<i8", false, {2, 1}, std::vector<std::int64_t>{0, 1}));
  put("labels.npy", npy_file("<i8", false, {2}, std::vector<std::int64_t>{0, 1}));
  const GraphDir g = read_graph_dir(dir_);
  EXPECT_FALSE(g.features.has_value());
  EXPECT_FALSE(g.labels.has_value());  // not asked for
  EXPECT_EQ(g.missing("features.npy"),
            dir_ + " has no features.npy (it holds edge_index.npy, labels.npy)");
}

TEST_F(AGraphDir, MissingEdgesNameTheFileAndWhatTheFolderHolds) {
  put("features.npy", npy_file("<f4", false, {2, 1}, std::vector<float>{1, 2}));
  EXPECT_EQ(message(), dir_ + " has no edge_index.npy (2, E) (it holds features.npy)");
  GraphDirOptions dense;
  dense.adjacency = true;
  EXPECT_EQ(message(dense),
            dir_ + " has no edge_index.npy (2, E) or adjacency.npy (n, n) (it holds features.npy)");
  GraphDirOptions none;
  none.edges = false;
  EXPECT_TRUE(read_graph_dir(dir_, none).features.has_value());
  fs::remove(dir_ + "/features.npy");
  EXPECT_EQ(message(), dir_ + " has no edge_index.npy (2, E) (it holds no .npy files)");
  EXPECT_EQ(message_for(dir_ + "/nope"), dir_ + "/nope: not a folder");
}

TEST_F(AGraphDir, AdjacencyIsReadOnlyWhenAskedAndWithoutAnEdgeList) {
  put("adjacency.npy", npy_file("<f4", false, {2, 2}, std::vector<float>{0, 1, 1, 0}));
  EXPECT_THROW(read_graph_dir(dir_), InvalidInput);
  GraphDirOptions dense;
  dense.adjacency = true;
  const GraphDir g = read_graph_dir(dir_, dense);
  EXPECT_EQ(g.adjacency_view()(0, 1), 1.0);
  EXPECT_EQ(g.converted.at("adjacency"), "float32->float64");
  put("edge_index.npy", npy_file("<i8", false, {2, 1}, std::vector<std::int64_t>{0, 1}));
  EXPECT_FALSE(read_graph_dir(dir_, dense).adjacency.has_value());
}

TEST_F(AGraphDir, ShapesAreCheckedAgainstEachOther) {
  put("edge_index.npy", npy_file("<i8", false, {3, 2}, std::vector<std::int64_t>(6, 0)));
  EXPECT_EQ(message(), dir_ +
                           "/edge_index.npy: expected shape (2, E), got (3, 2) (an (E, 2) list "
                           "of pairs: save its transpose)");
  put("edge_index.npy", npy_file("<i8", false, {2, 2}, std::vector<std::int64_t>(4, 0)));
  put("edge_weight.npy", npy_file("<f8", false, {3}, std::vector<double>(3, 1.0)));
  EXPECT_EQ(message(), dir_ + "/edge_weight.npy: expected shape (2,) as edge_index.npy, got (3,)");
  fs::remove(dir_ + "/edge_weight.npy");
  put("features.npy", npy_file("<f4", false, {2, 1, 1}, std::vector<float>(2, 1)));
  EXPECT_EQ(message(), dir_ + "/features.npy: expected shape (N, D), got (2, 1, 1)");
  put("features.npy", npy_file("<f4", false, {2}, std::vector<float>(2, 1)));  // reads as (2, 1)
  EXPECT_EQ(read_graph_dir(dir_).features_view().cols, 1);
  put("labels.npy", npy_file("<i8", false, {3}, std::vector<std::int64_t>(3, 0)));
  GraphDirOptions labels;
  labels.labels = true;
  EXPECT_EQ(message(labels), dir_ + "/labels.npy: expected shape (2,) as features.npy, got (3,)");
}

TEST_F(AGraphDir, DtypesThatDoNotConvertAreTypeErrorsNamingTheFile) {
  put("edge_index.npy", npy_file("<f8", false, {2, 1}, std::vector<double>{0, 1}));
  try {
    read_graph_dir(dir_);
    FAIL() << "no exception";
  } catch (const InvalidType& e) {
    EXPECT_EQ(std::string(e.what()), dir_ +
                                         "/edge_index.npy: expected int64 (or another integer "
                                         "dtype), got float64");
  }
  put("edge_index.npy", npy_file("<u8", false, {2, 1}, std::vector<std::uint64_t>{0, 1ull << 63}));
  EXPECT_THROW(read_graph_dir(dir_), InvalidInput);
}

TEST_F(AGraphDir, WriteThenReadGivesTheSameArrays) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> e = {0, 1, 1, 2};
  const std::vector<double> w = {0.5, 2.0};
  const std::vector<std::int64_t> labels = {1, 0, 1};
  GraphDirArrays arrays;
  arrays.features = MatrixView<const float>(x.data(), 3, 2);
  arrays.edge_index = MatrixView<const std::int64_t>(e.data(), 2, 2);
  arrays.edge_weight = std::span<const double>(w);
  arrays.labels = std::span<const std::int64_t>(labels);
  write_graph_dir(dir_ + "/out/g1", arrays);
  GraphDirOptions options;
  options.labels = true;
  const GraphDir g = read_graph_dir(dir_ + "/out/g1", options);
  EXPECT_EQ(g.features->bytes.size(), x.size() * 4);
  EXPECT_EQ(std::memcmp(g.features->bytes.data(), x.data(), x.size() * 4), 0);
  EXPECT_EQ(std::vector<std::int64_t>(g.edge_index_view().data, g.edge_index_view().data + 4), e);
  EXPECT_EQ(g.edge_weight_view()[1], 2.0);
  EXPECT_EQ(g.labels_view()[0], 1);
  EXPECT_TRUE(g.converted.empty());

  GraphDirArrays dense;
  const std::vector<double> a = {0, 1, 1, 0};
  dense.adjacency = MatrixView<const double>(a.data(), 2, 2);
  dense.edge_index = MatrixView<const std::int64_t>(nullptr, 2, 0);  // edge-less
  write_graph_dir(dir_ + "/dense", dense);
  EXPECT_EQ(read_graph_dir(dir_ + "/dense").edge_index_view().cols, 0);
  GraphDirArrays bad;
  bad.edge_index = MatrixView<const std::int64_t>(e.data(), 4, 1);
  EXPECT_THROW(write_graph_dir(dir_ + "/bad", bad), InvalidInput);
  GraphDirArrays strided;
  strided.features = MatrixView<const float>(x.data(), 2, 2, 3);
  EXPECT_THROW(write_graph_dir(dir_ + "/strided", strided), InvalidInput);
}

}  // namespace
}  // namespace birkhoff::io
