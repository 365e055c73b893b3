// PRIVATE (bindings): conversion between numpy/DLPack arrays and the core's views, and the
// glue every binding shares (GIL-aware progress callbacks). No algorithm lives here.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"

namespace birkhoff::python {

namespace nb = nanobind;

/// A read-only C-contiguous CPU array of T of any rank (checked by the callers).
template <class T>
using In = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;

/// (rows, cols) view of a 2-D array (a 1-D array is one column).
template <class T>
MatrixView<const T> matrix(const In<T>& a, const char* name) {
  if (a.ndim() == 1) return {a.data(), static_cast<std::int64_t>(a.shape(0)), 1};
  require(a.ndim() == 2, name,
          "must be a 2-D array, got " + std::to_string(a.ndim()) + " dimensions");
  return {a.data(), static_cast<std::int64_t>(a.shape(0)), static_cast<std::int64_t>(a.shape(1))};
}

template <class T>
std::span<const T> vector_view(const std::optional<In<T>>& a, const char* name) {
  if (!a) return {};
  require(a->ndim() == 1, name, "must be a 1-D array");
  return {a->data(), static_cast<std::size_t>(a->shape(0))};
}

/// Moves a vector into a new numpy array with the given shape, without copying its data.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& v, std::span<const std::size_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.data(), owner);
}
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& v, std::initializer_list<std::size_t> shape) {
  return to_numpy(std::move(v), std::span<const std::size_t>(shape.begin(), shape.size()));
}

/// Runs f() with the GIL released (the engine's solvers never touch Python objects; progress
/// callbacks take the GIL back themselves) and returns its result.
template <class F>
decltype(auto) call_without_gil(F&& f) {
  nb::gil_scoped_release release;
  return f();
}

/// A progress callback for a solver running without the GIL: it takes the GIL back at most
/// every 50 ms, honours Ctrl-C (the solver then throws Cancelled -> KeyboardInterrupt) and
/// forwards (stage, done, total) to `python_callback` when it is not None.
inline ProgressCallback progress_with_signals(nb::object python_callback) {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [python_callback, last](const ProgressInfo& info) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(50) && info.done != info.total) return true;
    *last = now;
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      return false;
    }
    if (!python_callback.is_none()) {
      python_callback(std::string(info.stage), info.done, info.total);
    }
    return true;
  };
}

}  // namespace birkhoff::python
