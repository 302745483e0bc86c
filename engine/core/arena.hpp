#pragma once
// Activation memory sized once (from the configuration, or by a planning pass that records what
// one step asks for), handed out by bump allocation and reset at the start of every step, so a
// training step allocates nothing (llm.c). Every block starts on a 64-byte boundary.
//
// The memory is a backend's (Arena(bytes, backend): Backend::allocate, so a model's activations
// live where its ops run) or host memory (Arena(bytes), for tests). The arena only does pointer
// arithmetic on its base; it never reads or writes what it hands out.
#include <cstddef>
#include <string>

#include "engine/backend/device_array.hpp"
#include "engine/core/aligned_buffer.hpp"
#include "engine/core/error.hpp"

namespace routescope {

class Arena {
public:
    static constexpr std::size_t kAlignment = 64;

    /// Bytes a block of `count` T occupies in the arena (rounded up to the alignment).
    template <class T>
    static std::size_t footprint(std::size_t count) {
        return (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
    }

    Arena() = default;
    /// Host memory.
    explicit Arena(std::size_t bytes)
        : storage_(bytes / kAlignment + 1),
          base_(reinterpret_cast<unsigned char*>(storage_.data())),
          capacity_(bytes) {}
    /// `backend`'s memory (which must outlive the arena).
    Arena(std::size_t bytes, Backend& backend)
        : device_storage_(backend, bytes / kAlignment + 1),
          base_(reinterpret_cast<unsigned char*>(device_storage_.data())),
          capacity_(bytes) {}

    /// `count` elements of T, NOT cleared: after reset() they hold whatever the previous step
    /// left there. `what` names the tensor for the error message.
    template <class T>
    T* alloc(std::size_t count, const char* what = "tensor") {
        const std::size_t bytes = footprint<T>(count);
        if (used_ + bytes > capacity_) {
            throw Error("Arena: out of activation memory allocating " + std::string(what) + " (" +
                        std::to_string(bytes) + " bytes; " + std::to_string(used_) + " of " +
                        std::to_string(capacity_) + " used)");
        }
        T* p = reinterpret_cast<T*>(base_ + used_);
        used_ += bytes;
        if (used_ > high_water_) high_water_ = used_;
        return p;
    }

    /// Start of a step: everything handed out before is free again.
    void reset() { used_ = 0; }
    /// Everything handed out since used() was `mark` is free again (an inference step's layer
    /// done with: engine/models/graph.hpp, release_to).
    void rewind(std::size_t mark) {
        if (mark > used_)
            throw Error("Arena::rewind: mark " + std::to_string(mark) + " lies beyond the " +
                        std::to_string(used_) + " bytes in use");
        used_ = mark;
    }

    std::size_t used() const { return used_; }
    std::size_t capacity() const { return capacity_; }
    std::size_t high_water() const { return high_water_; }

private:
    struct alignas(kAlignment) Line {
        unsigned char bytes[kAlignment];
    };
    AlignedBuffer<Line> storage_;
    DeviceArray<Line> device_storage_;
    unsigned char* base_ = nullptr;
    std::size_t capacity_ = 0;
    std::size_t used_ = 0;
    std::size_t high_water_ = 0;
};

}  // namespace routescope
