#pragma once
// Include asio only through this header. asio sets ASIO_HAS_STD_ALIGNED_ALLOC from a libstdc++
// macro (_GLIBCXX_HAVE_ALIGNED_ALLOC) that exists only after some standard header was included.
// A file that includes <asio.hpp> before any standard header therefore frees handler memory
// with operator delete while another file allocates it with aligned_alloc: an ODR violation
// that ASan reports as alloc-dealloc-mismatch. Including <cstddef> first makes every file agree.

// clang-format off
#include <cstddef>
#include <asio.hpp>
// clang-format on
