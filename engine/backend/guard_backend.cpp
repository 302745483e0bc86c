#include "engine/backend/guard_backend.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/core/error.hpp"

namespace routescope {
namespace {

// The mappings of every guard backend, readable from the signal handler without locks: a slot's
// base is written last when it is filled and cleared first when it is freed.
struct Region {
    std::atomic<std::uintptr_t> base{0};
    std::atomic<std::size_t> bytes{0};      // the mapping's length (whole pages)
    std::atomic<std::size_t> requested{0};  // what allocate() was asked for
    std::atomic<std::uint64_t> serial{0};
    const GuardBackend* owner = nullptr;
};
constexpr std::size_t kMaxRegions = 1 << 14;
Region g_regions[kMaxRegions];
std::mutex g_mutex;  // slot bookkeeping (never taken in the handler)
std::atomic<std::uint64_t> g_serial{0};
std::once_flag g_handler_once;
struct sigaction g_previous {};

std::size_t page_size() {
    static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return p;
}

// Async-signal-safe formatting into a fixed buffer.
struct Text {
    char buf[512];
    std::size_t n = 0;
    void add(const char* s) {
        while (*s && n + 1 < sizeof buf)
            buf[n++] = *s++;
    }
    void hex(std::uintptr_t v) {
        add("0x");
        char d[2 * sizeof v];
        int k = 0;
        do {
            d[k++] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v && k < int(sizeof d));
        while (k > 0 && n + 1 < sizeof buf)
            buf[n++] = d[--k];
    }
    void dec(std::uint64_t v) {
        char d[24];
        int k = 0;
        do {
            d[k++] = char('0' + v % 10);
            v /= 10;
        } while (v && k < 24);
        while (k > 0 && n + 1 < sizeof buf)
            buf[n++] = d[--k];
    }
    void write() const { (void)!::write(STDERR_FILENO, buf, n); }
};

void die_of(int sig) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);  // returning re-runs the access, which now kills
}

void on_fault(int sig, siginfo_t* info, void* context) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (const Region& r : g_regions) {
        const std::uintptr_t base = r.base.load(std::memory_order_acquire);
        if (base == 0 || addr < base || addr >= base + r.bytes.load()) continue;
        Text t;
        t.add("routescope guard backend: the host touched device memory at ");
        t.hex(addr);
        t.add(" outside a backend call (allocation #");
        t.dec(r.serial.load());
        t.add(" of ");
        t.dec(r.requested.load());
        t.add(" bytes at ");
        t.hex(base);
        t.add(", offset ");
        t.dec(addr - base);
        t.add("); the reading code follows:\n");
        t.write();
        void* frames[48];
        const int n = ::backtrace(frames, 48);
        ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
        die_of(sig);  // our fault: the process dies of it, whoever else handles SIGSEGV
        return;
    }
    // Not our memory: hand it to whoever had the signal before, or die of it.
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
               g_previous.sa_handler) {
        return g_previous.sa_handler(sig);
    }
    die_of(sig);
}

void install_handler() {
    std::call_once(g_handler_once, [] {
        struct sigaction sa {};
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGSEGV, &sa, &g_previous);
    });
}

}  // namespace

class GuardBackend::Open {
public:
    explicit Open(GuardBackend& b) : b_(b) {
        if (b_.depth_++ == 0) b_.protect(true);
    }
    ~Open() {
        if (--b_.depth_ == 0) b_.protect(false);
    }
    Open(const Open&) = delete;
    Open& operator=(const Open&) = delete;

private:
    GuardBackend& b_;
};

GuardBackend::GuardBackend(ThreadPool& pool) : cpu_(std::make_unique<CpuBackend>(pool)) {
    install_handler();
}

GuardBackend::~GuardBackend() {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (Region& r : g_regions)
        if (r.owner == this && r.base.load()) {
            const std::uintptr_t base = r.base.exchange(0);
            ::munmap(reinterpret_cast<void*>(base), r.bytes.load());
            r.owner = nullptr;
        }
}

bool GuardBackend::owns(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const Region& r : g_regions) {
        const std::uintptr_t base = r.base.load(std::memory_order_acquire);
        if (base && a >= base && a < base + r.bytes.load()) return true;
    }
    return false;
}

void GuardBackend::protect(bool accessible) {
    const int prot = accessible ? PROT_READ | PROT_WRITE : PROT_NONE;
    for (const Region& r : g_regions) {
        if (r.owner != this) continue;
        const std::uintptr_t base = r.base.load(std::memory_order_acquire);
        if (base && ::mprotect(reinterpret_cast<void*>(base), r.bytes.load(), prot) != 0) {
            std::fprintf(stderr, "routescope guard backend: mprotect failed: %s\n",
                         std::strerror(errno));
            std::abort();
        }
    }
}

bool GuardBackend::supports(ops::OpId op, DType real) const {
    return cpu_->supports(op, real);
}

void* GuardBackend::allocate(std::size_t bytes) {
    const std::size_t page = page_size();
    const std::size_t length = (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
    void* p = ::mmap(nullptr, length, depth_ > 0 ? PROT_READ | PROT_WRITE : PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    std::lock_guard<std::mutex> lock(g_mutex);
    for (Region& r : g_regions) {
        if (r.base.load() != 0 || r.owner != nullptr) continue;
        r.owner = this;
        r.bytes = length;
        r.requested = bytes;
        r.serial = ++g_serial;
        r.base.store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_release);
        return p;
    }
    ::munmap(p, length);
    throw Error("guard backend: more than " + std::to_string(kMaxRegions) + " live allocations");
}

void GuardBackend::release(void* p) noexcept {
    if (!p) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    for (Region& r : g_regions)
        if (r.owner == this && r.base.load() == reinterpret_cast<std::uintptr_t>(p)) {
            r.base.store(0, std::memory_order_release);
            ::munmap(p, r.bytes.load());
            r.owner = nullptr;
            return;
        }
}

void GuardBackend::zero(void* p, std::size_t bytes) {
    Open open(*this);
    cpu_->zero(p, bytes);
}

void GuardBackend::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) {
    Open open(*this);
    cpu_->copy(dst, src, bytes, kind);
    count_copy(bytes, kind);
}

void GuardBackend::prepare(const ops::OpCall& call) {
    Open open(*this);
    cpu_->prepare(call);
}

void GuardBackend::forward(const ops::OpCall& call) {
    Open open(*this);
    cpu_->forward(call);
}

void GuardBackend::backward(const ops::OpCall& call) {
    Open open(*this);
    cpu_->backward(call);
}

double GuardBackend::sum_squares(const float* x, std::size_t n) {
    Open open(*this);
    return cpu_->sum_squares(x, n);
}

void GuardBackend::scale(float* x, float a, std::size_t n) {
    Open open(*this);
    cpu_->scale(x, a, n);
}

void GuardBackend::adamw(const AdamWSpan& span) {
    Open open(*this);
    cpu_->adamw(span);
}

void GuardBackend::row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                               std::int64_t width, std::int32_t* argmax, double* nll) {
    Open open(*this);
    cpu_->row_readout(logits, targets, rows, width, argmax, nll);
}

void GuardBackend::to_half(const float* x, std::uint16_t* out, std::size_t n) {
    Open open(*this);
    cpu_->to_half(x, out, n);
}

}  // namespace routescope
