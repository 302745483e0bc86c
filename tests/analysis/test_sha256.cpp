// SHA-256 (engine/io/sha256, OpenSSL's libcrypto) and the provenance fingerprint of files: FIPS
// 180-4's test vectors, the same digest whatever the update sizes, and a 300 MiB file (over the
// 256 MiB that used to get a sampled hash) hashed exactly as `sha256sum` hashes it, including after
// a byte in its middle changes (the fingerprint's cache notices).
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/file_fingerprint.hpp"
#include "engine/core/error.hpp"
#include "engine/io/sha256.hpp"

using namespace routescope;
using namespace routescope::analysis;

namespace {

std::string digest(const std::string& text) {
    Sha256 sha;
    sha.update(text.data(), text.size());
    return sha.hex_digest();
}

/// What /usr/bin/sha256sum prints for the file (the first field).
std::string sha256sum(const QString& path) {
    QProcess p;
    p.start("/usr/bin/sha256sum", {path});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return "sha256sum failed";
    return QString::fromLatin1(p.readAllStandardOutput()).section(' ', 0, 0).toStdString();
}

/// Writes `byte` at `offset` in place (the file keeps its size).
void poke(const QString& path, std::int64_t offset, char byte) {
    const int fd = ::open(path.toLocal8Bit().constData(), O_WRONLY);
    QVERIFY(fd >= 0);
    QCOMPARE(::pwrite(fd, &byte, 1, offset), ssize_t{1});
    ::close(fd);
}

}  // namespace

class TestSha256 : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString big_;
    QElapsedTimer big_written_;
    static constexpr std::int64_t kBig = 300ll << 20;

private slots:
    // A sparse 300 MiB file with a few marked pages, one of them in the middle (which a hash of the
    // first and last MiB never saw). Written first: the cache test below needs it 2 s old.
    void initTestCase() {
        QVERIFY(dir_.isValid());
        big_ = dir_.filePath("big.bin");
        const int fd = ::open(big_.toLocal8Bit().constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, kBig), 0);
        std::mt19937 rng(7);
        std::vector<char> page(4096);
        for (std::int64_t offset : {std::int64_t{0}, kBig / 3, kBig / 2, kBig - 4096}) {
            for (char& c : page)
                c = static_cast<char>(rng());
            QCOMPARE(::pwrite(fd, page.data(), page.size(), offset), ssize_t(page.size()));
        }
        ::close(fd);
        big_written_.start();
    }

    void fipsVectors() {
        QCOMPARE(digest(""),
                 std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(digest("abc"),
                 std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        // One million 'a', in updates of 999 bytes (not a multiple of the 64-byte block).
        Sha256 sha;
        const std::string chunk(999, 'a');
        std::size_t left = 1000000;
        while (left > 0) {
            const std::size_t take = std::min(left, chunk.size());
            sha.update(chunk.data(), take);
            left -= take;
        }
        QCOMPARE(sha.hex_digest(),
                 std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void sameDigestWhateverTheUpdateSizes() {
        std::mt19937 rng(3);
        std::string data(10000, '\0');
        for (char& c : data)
            c = static_cast<char>(rng());
        const std::string whole = digest(data);
        for (std::size_t step : {1, 3, 55, 63, 64, 65, 4096}) {
            Sha256 sha;
            for (std::size_t i = 0; i < data.size(); i += step)
                sha.update(data.data() + i, std::min(step, data.size() - i));
            QCOMPARE(sha.hex_digest(), whole);
        }
    }

    void smallFileAsSha256sum() {
        const QString path = dir_.filePath("small.txt");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("routescope\n");
        f.close();
        QCOMPARE(sha256_file(path.toStdString()), sha256sum(path));
        const FileFingerprint fp = fingerprint_file(path.toStdString());
        QCOMPARE(fp.hash, sha256sum(path));
        QCOMPARE(fp.kind, std::string("sha256"));
        QCOMPARE(fp.size, std::uint64_t{11});
    }

    void fileOver256MiBAsSha256sum() {
        const std::string expected = sha256sum(big_);
        QCOMPARE(expected.size(), std::size_t{64});
        QCOMPARE(sha256_file(big_.toStdString()), expected);
        // Old enough (2 s) for the fingerprint to remember it.
        if (big_written_.elapsed() < 2100) QTest::qWait(2100 - int(big_written_.elapsed()));
        const FileFingerprint fp = fingerprint_file(big_.toStdString());
        QCOMPARE(fp.hash, expected);
        QCOMPARE(fp.kind, std::string("sha256"));
        QCOMPARE(fp.size, std::uint64_t(kBig));
        QCOMPARE(fingerprint_file(big_.toStdString()).hash, expected);  // from the cache

        // One byte in the middle changes in place; the size does not.
        poke(big_, kBig / 2 + 100, 'x');
        const std::string changed = sha256sum(big_);
        QVERIFY(changed != expected);
        QCOMPARE(fingerprint_file(big_.toStdString()).hash, changed);
        QCOMPARE(sha256_file(big_.toStdString()), changed);
    }

    void unreadableFileIsAnIoError() {
        const std::string missing = dir_.filePath("missing.bin").toStdString();
        QVERIFY_THROWS_EXCEPTION(IoError, sha256_file(missing));
        QVERIFY_THROWS_EXCEPTION(IoError, fingerprint_file(missing));
    }
};

QTEST_GUILESS_MAIN(TestSha256)
#include "test_sha256.moc"
