#include "engine/io/sha256.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/core/error.hpp"

namespace routescope {

namespace {
// OpenSSL frees its global state in an atexit handler, and frees each thread's state when the
// thread ends. A worker thread that hashed (a figure's provenance) can end while the process
// exits: Qt's QThread::wait() returns before the thread's own end, and the thread's destructor
// then read state the handler had freed (routescope --export, SIGSEGV at exit in about 1 run in
// 2,000 on 2 cores). Without the handler the state lives until the process is gone. It takes
// effect only as the process's first OpenSSL initialisation: made here, before main, where nothing
// else has called libcrypto (HDF5 and curl link it, but call it only later, if at all).
int openssl_without_atexit() {
    static const int ok = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
    return ok;
}
[[maybe_unused]] const int kOpensslInitialised = openssl_without_atexit();
}  // namespace

struct Sha256::Context {
    EVP_MD_CTX* ctx = nullptr;
    ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
    (void)openssl_without_atexit();
    context_->ctx = EVP_MD_CTX_new();
    if (context_->ctx == nullptr || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1)
        throw Error("SHA-256: OpenSSL could not initialise the digest");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size > 0 && EVP_DigestUpdate(context_->ctx, data, size) != 1)
        throw Error("SHA-256: OpenSSL digest update failed");
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context_->ctx, digest, &length) != 1)
        throw Error("SHA-256: OpenSSL digest finalisation failed");
    static const char* kHex = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
        out += kHex[digest[i] >> 4];
        out += kHex[digest[i] & 0xf];
    }
    return out;
}

std::string sha256_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(path + ": cannot open the file for hashing: " + std::strerror(errno));
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    Sha256 sha;
    std::vector<char> buffer(1 << 20);
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) continue;
            throw IoError(path + ": read error while hashing: " + std::strerror(errno));
        }
        if (got == 0) break;
        sha.update(buffer.data(), static_cast<std::size_t>(got));
    }
    return sha.hex_digest();
}

}  // namespace routescope
