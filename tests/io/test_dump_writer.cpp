// DumpWriter writes files that pass validation, stream row by row, and never leave a partial file
// under the final name. Its float16 conversion (half_bits, to_half) gives numpy's astype(float16)
// bit for bit; its write queue keeps order, bounds memory and hands back the first error.
#include <QtTest>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>

#include "../engine/half_test_values.hpp"
#include "../file_size_limit.hpp"
#include "engine/backend/device_array.hpp"
#include "engine/backend/make_backend.hpp"
#include "engine/core/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/dump_writer.hpp"
#include "engine/io/file_info.hpp"
#include "engine/io/half.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/io/validation.hpp"
#include "engine/io/write_queue.hpp"

using namespace routescope;

namespace {
// aStopSignalNeverSeesHalfANewSet: a set of files each holding its generation's letter, and a
// handler as routescope-cli's (docs/cli.md: an interrupted command exits 130, and a failure
// leaves nothing half written) that, where it would end the process, reads the set instead.
constexpr int kSetFiles = 8;
char set_paths[kSetFiles][1024];
std::atomic<int> sets_seen{0}, half_sets_seen{0}, signals_held{0};

extern "C" void read_the_set_where_the_cli_would_exit(int sig) {
    if (hold_signal_while_renaming(sig)) {
        signals_held.fetch_add(1);
        return;
    }
    char first = 0;
    for (int i = 0; i < kSetFiles; ++i) {  // open(2), read(2), close(2): async-signal-safe
        char c = 0;
        const int fd = ::open(set_paths[i], O_RDONLY);
        if (fd >= 0) {
            if (::read(fd, &c, 1) != 1) c = 0;
            ::close(fd);
        }
        if (i == 0)
            first = c;
        else if (c != first) {
            half_sets_seen.fetch_add(1);
            break;
        }
    }
    sets_seen.fetch_add(1);
}
}  // namespace

class TestDumpWriter : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    DumpSpec small_spec(bool f16) {
        DumpSpec spec;
        spec.arch = "bigs";
        spec.name = "writer-test";
        spec.n_layers = 2;
        spec.d_model = 3;
        spec.examples = 2;
        spec.length = 4;
        spec.layers = {0, 2};
        spec.sentence = true;
        spec.gates = {"u_f"};
        spec.gate_channels = 3;
        spec.float16 = f16;
        spec.labels = spec.text = true;
        spec.attributes = {"gap"};
        return spec;
    }

    void fill(DumpWriter& w) {
        for (int s = 0; s < 2; ++s) {
            ExampleRecord r;
            r.tokens = {5, 6, 7, 0};
            r.length = 3 - s;
            r.label = s;
            r.text = "ex" + std::to_string(s);
            r.attributes = {1.5 * s};
            w.write_example(s, r);
            std::vector<float> h(12);
            for (int i = 0; i < 12; ++i)
                h[i] = 0.25f * i + s;
            for (int l : {0, 2}) {
                w.write_hidden(l, s, h.data());
                w.write_sentence(l, s, h.data());
            }
            w.write_gate(2, "u_f", s, h.data());
        }
        w.write_kernel(1, {1, 0.5f, 0.25f, 0.125f}, {1, 0.5f, 0.25f, 0.125f}, 1.0, 1.0);
    }

private slots:
    // The small outputs' writer (project files, predictions, a figure's CSV) on a disk that
    // refuses the bytes: a child process with a file-size limit (RLIMIT_FSIZE, the kernel's EFBIG
    // as a full disk's ENOSPC) replaces a file. The error names the file and the OS's reason, the
    // old file is left byte for byte, no temporary remains. (Qt 6.4's QSaveFile, which wrote the
    // project before, reported success and renamed an empty file over it.)
    void aWriteTheDiskRefusesLeavesTheOldFile() {
        const std::string path = dir_.filePath("p.rsproj").toStdString();
        const std::string before = "{\"format\": \"routescope-project\"}\n";
        std::ofstream(path) << before;
        const std::string said = test_support::error_under_file_size_limit(
            1024, [&] { write_text_atomically(path, std::string(4096, 'x')); });
        QVERIFY2(said.find(path) != std::string::npos &&
                     said.find("File too large") != std::string::npos,
                 said.c_str());
        std::ifstream in(path);
        const std::string after((std::istreambuf_iterator<char>(in)), {});
        QCOMPARE(after, before);
        for (const auto& e : std::filesystem::directory_iterator(dir_.path().toStdString()))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     e.path().c_str());
    }

    // A stop signal that arrives while a set of outputs (eval's predictions and summary, analyze's
    // --out and --csv) is being renamed into place is acted on after the last rename, in whichever
    // thread it arrives: routescope-cli's handler exited between two renames and left the new
    // predictions beside the old summary (exit 130). Another thread sends SIGUSR1 to the process
    // over and over while the set is written again and again; wherever the handler acts, the files
    // are all of one generation.
    void aStopSignalNeverSeesHalfANewSet() {
        QVERIFY(!hold_signal_while_renaming(SIGUSR1));  // no set being renamed: act at once
        for (int i = 0; i < kSetFiles; ++i) {
            const std::string p = dir_.filePath(QStringLiteral("set-%1.txt").arg(i)).toStdString();
            QVERIFY(p.size() < sizeof set_paths[i]);
            std::strcpy(set_paths[i], p.c_str());
        }
        const auto write_set = [](char generation) {
            std::vector<std::pair<std::string, std::string>> files;
            for (int i = 0; i < kSetFiles; ++i)
                files.emplace_back(set_paths[i], std::string(1, generation) + "\n");
            write_texts_atomically(files);
        };
        write_set('a');
        struct sigaction sa {
        }, previous{};
        sa.sa_handler = read_the_set_where_the_cli_would_exit;
        sa.sa_flags = SA_RESTART;  // the writer's fsync and open go on after a handler returns
        sigemptyset(&sa.sa_mask);
        QCOMPARE(sigaction(SIGUSR1, &sa, &previous), 0);
        std::atomic<bool> done{false};
        std::thread sender([&] {
            while (!done.load()) {
                ::kill(::getpid(), SIGUSR1);  // the process: any thread, this one included
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (int n = 0; signals_held.load() < 20 && std::chrono::steady_clock::now() < until; ++n)
            write_set(static_cast<char>('a' + n % 26));
        done.store(true);
        sender.join();
        sigaction(SIGUSR1, &previous, nullptr);
        qInfo("%d signals handled, %d of them held during renames, %d saw half a set",
              sets_seen.load(), signals_held.load(), half_sets_seen.load());
        QCOMPARE(half_sets_seen.load(), 0);
        QVERIFY2(signals_held.load() > 0, "no signal arrived while a set was being renamed");
    }

    void writtenDumpValidates_data() {
        QTest::addColumn<bool>("f16");
        QTest::newRow("float32") << false;
        QTest::newRow("float16") << true;
    }
    void writtenDumpValidates() {
        QFETCH(bool, f16);
        const std::string path = dir_.filePath(f16 ? "w16.dump.h5" : "w32.dump.h5").toStdString();
        DumpWriter w(path, small_spec(f16));
        fill(w);
        QVERIFY(!std::filesystem::exists(path));  // nothing under the final name until finish()
        w.finish();
        const auto report = validate_file(path);
        for (const auto& v : report.violations)
            qWarning() << QString::fromStdString(v.text());
        QVERIFY(report.ok());
        const auto info = read_file_info(path);
        QCOMPARE(info.examples, 2u);
        QCOMPARE(info.length, 4u);
        QCOMPARE(info.layers.size(), std::size_t(2));
        QCOMPARE(info.layers[1].hidden->dtype, std::string(f16 ? "float16" : "float32"));
        QCOMPARE(info.kernels.size(), std::size_t(1));
        // The space reserved before writing (1 MiB and 2% beyond the datasets) is given back:
        // the file ends where HDF5's allocation does (a dump of 2 examples is a few kB).
        const auto bytes = std::filesystem::file_size(path);
        QVERIFY2(
            bytes < 256 * 1024,
            qPrintable(QString("a small dump holds %1 bytes: the reserve was kept").arg(bytes)));
    }

    void abandonedWriterLeavesNoFile() {
        const std::string path = dir_.filePath("abandoned.dump.h5").toStdString();
        std::string temp;
        {
            DumpWriter w(path, small_spec(false));
            temp = w.temp_path();
            QVERIFY(std::filesystem::exists(temp));
            ExampleRecord bad;
            bad.tokens = {1, 2};  // wrong L
            bad.length = 2;
            QVERIFY_THROWS_EXCEPTION(FormatError, w.write_example(0, bad));
        }
        QVERIFY(!std::filesystem::exists(path));
        QVERIFY(!std::filesystem::exists(temp));
    }

    void halfBitsAreNumpysFloat16() {
        // half_test_values(): every half, its neighbours, the ties, the edges, NaN. numpy (not
        // this code) says what each must become.
        const std::vector<float> x = half_test_values();
        const QString in = dir_.filePath("halves.f32"), out = dir_.filePath("halves.u16");
        {
            std::ofstream f(in.toStdString(), std::ios::binary);
            f.write(reinterpret_cast<const char*>(x.data()),
                    static_cast<std::streamsize>(x.size() * sizeof(float)));
        }
        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {"-c",
                  "import sys, numpy as np\n"
                  "x = np.fromfile(sys.argv[1], dtype='<f4')\n"
                  "x.astype(np.float16).view('<u2').tofile(sys.argv[2])\n",
                  in, out});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        std::vector<std::uint16_t> want(x.size());
        {
            std::ifstream f(out.toStdString(), std::ios::binary);
            f.read(reinterpret_cast<char*>(want.data()),
                   static_cast<std::streamsize>(want.size() * sizeof(std::uint16_t)));
            QCOMPARE(static_cast<std::size_t>(f.gcount()), want.size() * sizeof(std::uint16_t));
        }
        std::vector<std::uint16_t> vectorised(x.size());
        to_half(x.data(), x.size(), vectorised.data());
        int bad = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const std::uint16_t scalar = half_bits(x[i]);
            if ((scalar != want[i] || vectorised[i] != want[i]) && bad++ < 5)
                qWarning("x = %.9g: numpy %04x, half_bits %04x, to_half %04x",
                         static_cast<double>(x[i]), want[i], scalar, vectorised[i]);
        }
        QCOMPARE(bad, 0);
        QVERIFY(x.size() > 300000);

        // Backend::to_half, the conversion a float16 dump makes where the activations are, on
        // each backend this build runs without a GPU (the CUDA one: test_backend_conformance).
        ThreadPool pool(2);
        for (Device dev : {Device::cpu, Device::guard, Device::cuda_emulated}) {
            auto backend = make_backend(dev, pool);
            DeviceArray<float> in_dev(*backend, x.size());
            DeviceArray<std::uint16_t> out_dev(*backend, x.size());
            in_dev.upload(x);
            backend->to_half(in_dev.data(), out_dev.data(), x.size());
            const std::vector<std::uint16_t> got = out_dev.download();
            int wrong = 0;
            for (std::size_t i = 0; i < x.size(); ++i)
                if (got[i] != want[i] && wrong++ < 5)
                    qWarning("%s: x = %.9g: numpy %04x, Backend::to_half %04x", backend->name(),
                             static_cast<double>(x[i]), want[i], got[i]);
            QVERIFY2(wrong == 0, backend->name());
        }
    }

    void float16RowsGivenAsHalvesAreStoredAsTheyAre() {
        // A FloatRow of binary16 bits goes to the file unchanged; floats are converted by the
        // writer; both read back (HDF5 half → float, exact) as the same values.
        const std::string path = dir_.filePath("halves.dump.h5").toStdString();
        DumpSpec spec = small_spec(true);
        {
            DumpWriter w(path, spec);
            fill(w);
            std::vector<float> h(12);
            std::vector<std::uint16_t> bits(12);
            for (int i = 0; i < 12; ++i)
                h[i] = 0.1f * static_cast<float>(i) - 0.3f;
            to_half(h.data(), h.size(), bits.data());
            w.write_hidden(0, 1, bits.data());
            w.write_hidden(2, 1, h.data());
            w.finish();
        }
        H5::H5File f(path, H5F_ACC_RDONLY);
        std::vector<float> a(24), b(24);
        f.openDataSet("layers/0/hidden").read(a.data(), H5::PredType::NATIVE_FLOAT);
        f.openDataSet("layers/2/hidden").read(b.data(), H5::PredType::NATIVE_FLOAT);
        for (int i = 0; i < 12; ++i) {
            QCOMPARE(a[12 + i], b[12 + i]);
            QVERIFY(std::fabs(a[12 + i] - (0.1f * static_cast<float>(i) - 0.3f)) < 5e-4f);
        }
    }

    void writeQueueKeepsOrderBoundsMemoryAndRethrows() {
        std::vector<int> seen;
        {
            WriteQueue q(100);
            for (int i = 0; i < 50; ++i) {
                WriteQueue::Buffer b = q.buffer(40);
                b[0] = static_cast<std::byte>(i);
                q.push(std::move(b), [&seen](const WriteQueue::Buffer& d) {
                    seen.push_back(static_cast<int>(d[0]));
                });
            }
            WriteQueue::Buffer big = q.buffer(1000);  // larger than the bound: waits for empty
            q.push(std::move(big), [&seen](const WriteQueue::Buffer& d) {
                seen.push_back(static_cast<int>(d.size()));
            });
            q.drain();
            QVERIFY(q.peak_bytes() <= 1000);
            QVERIFY(q.peak_bytes() >= 40);
        }
        QCOMPARE(seen.size(), std::size_t(51));
        for (int i = 0; i < 50; ++i)
            QCOMPARE(seen[static_cast<std::size_t>(i)], i);
        QCOMPARE(seen.back(), 1000);

        // The first error reaches the producer; nothing queued after it runs.
        std::atomic<int> ran{0};
        WriteQueue q(1 << 20);
        q.push({}, [&](const WriteQueue::Buffer&) { throw std::runtime_error("disk full"); });
        bool thrown = false;
        try {
            for (int i = 0; i < 1000; ++i)
                q.push({}, [&](const WriteQueue::Buffer&) { ++ran; });
            q.drain();
        } catch (const std::runtime_error& e) {
            thrown = QString(e.what()) == "disk full";
        }
        QVERIFY(thrown);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, q.drain());
        QCOMPARE(ran.load(), 0);
    }

    void writeQueueReusesItsBuffersInItsOwnMemory() {
        // A dump on a GPU gives the queue page-locked memory (Backend::allocate_host), which is
        // slow to allocate: rows of two sizes, interleaved, must come from a few buffers reused,
        // all of them from the given memory and all given back.
        std::atomic<int> live{0}, made{0};
        std::size_t allocations = 0;
        std::size_t written = 0;
        {
            HostMemory memory{[&](std::size_t n) {
                                  ++made, ++live;
                                  return ::operator new(n);
                              },
                              [&](void* p) {
                                  --live;
                                  ::operator delete(p);
                              }};
            WriteQueue q(1 << 20, memory);
            for (int i = 0; i < 2000; ++i) {
                const std::size_t bytes = i % 2 ? 2048 : 65536;
                WriteQueue::Buffer b = q.buffer(bytes);
                QCOMPARE(b.size(), bytes);
                std::memset(b.data(), i & 0xFF, bytes);
                q.push(std::move(b), [&written, i, bytes](const WriteQueue::Buffer& d) {
                    if (d.size() == bytes && d[bytes - 1] == static_cast<std::byte>(i & 0xFF))
                        ++written;
                });
            }
            q.drain();
            allocations = q.allocations();
            QCOMPARE(static_cast<std::size_t>(made.load()), allocations);
        }
        QCOMPARE(written, std::size_t(2000));
        QCOMPARE(live.load(), 0);
        // At most a queue's worth of each size (16 of 64 KiB, 512 of 2 KiB) and a few more.
        qInfo("%zu buffers allocated for 2000 rows", allocations);
        QVERIFY2(allocations < 600, qPrintable(QString::number(allocations)));
    }

    void abandonedWriteQueueDropsWhatIsQueued() {
        // A producer's error part-way: the queue is destroyed with writes still queued; they are
        // dropped (not run against a writer about to remove its file), and the join returns.
        std::atomic<int> ran{0};
        std::atomic<bool> release{false}, started{false};
        std::thread releaser;
        {
            WriteQueue q(1 << 20);
            q.push({}, [&](const WriteQueue::Buffer&) {
                started = true;
                while (!release)
                    std::this_thread::yield();
                ++ran;
            });
            for (int i = 0; i < 100; ++i)
                q.push({}, [&](const WriteQueue::Buffer&) { ++ran; });
            while (!started)  // the first write is running; the 100 wait behind it
                std::this_thread::yield();
            releaser = std::thread([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                release = true;
            });
        }  // ~WriteQueue: drops the 100, waits for the running write
        releaser.join();
        QCOMPARE(ran.load(), 1);  // the one that was running finished; the 100 queued did not run
    }

    // docs/cli.md: an --out that is a device or a FIFO is refused before any work (exit 2, a
    // ConfigError), every command's output alike. A pipe reached through a descriptor's link
    // (/dev/stdout of `... --out /dev/stdout | cat` is /proc/self/fd/1, whose link text is
    // "pipe:[N]", no path) was read as the file "/proc/PID/fd/pipe:[N]" to create (exit 3, "No
    // such file or directory"). A socket's descriptor likewise; a regular file's descriptor
    // still names that file.
    void anOutputThatIsAPipesDescriptorIsAFifo() {
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        int sockets[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
        const std::string pipe_out = "/proc/self/fd/" + std::to_string(fds[1]);
        const std::string socket_out = "/proc/self/fd/" + std::to_string(sockets[0]);
        for (const auto& [out, kind] : {std::pair{pipe_out, std::string("is a FIFO")},
                                        std::pair{socket_out, std::string("is a socket")}}) {
            try {
                DumpWriter w(out, small_spec(false));
                QFAIL(qPrintable(QString::fromStdString(out) + ": written"));
            } catch (const ConfigError& e) {
                QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(out + ": " + kind)),
                         e.what());
            }
            try {
                write_text_atomically(out, "x");
                QFAIL(qPrintable(QString::fromStdString(out) + ": written"));
            } catch (const ConfigError& e) {
                QVERIFY2(QString(e.what()).contains(QString::fromStdString(kind)), e.what());
            }
        }
        for (int fd : {fds[0], fds[1], sockets[0], sockets[1]})
            ::close(fd);
        const std::string file = dir_.filePath("through-fd.txt").toStdString();
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(atomic_write_target("/proc/self/fd/" + std::to_string(fd)),
                 std::filesystem::canonical(file).string());
        ::close(fd);
    }

    void unwritableDirectoryIsAClearError() {
        try {
            DumpWriter w("/proc/no-such-dir/x.dump.h5", small_spec(false));
            QFAIL("expected IoError");
        } catch (const IoError& e) {
            QVERIFY(QString(e.what()).contains("/proc/no-such-dir/x.dump.h5: cannot create"));
        }
    }
};

QTEST_APPLESS_MAIN(TestDumpWriter)
#include "test_dump_writer.moc"
