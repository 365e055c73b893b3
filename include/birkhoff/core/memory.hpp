#pragma once

#include <cstddef>
#include <new>

namespace birkhoff {

/// Allocator whose blocks start on a 64-byte cache line, so that a record or row that fits in
/// one line does not straddle two (std::vector<T, CacheLineAllocator<T>>).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t n) {
    ::operator delete (p, n * sizeof(T), std::align_val_t{64});
  }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

}  // namespace birkhoff
