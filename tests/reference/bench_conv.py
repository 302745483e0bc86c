#!/usr/bin/python3
"""PyTorch side of `routescope-cli bench conv --baseline torch`: time the SSM's causal FFT
convolution y = irfft(rfft(pad(u, 2L)) * rfft(pad(k, 2L)))[:L] of C channels, one kernel each,
with torch.fft, on the CPU (--threads) and, when torch sees one, on the GPU, and print one JSON
object.

    /usr/bin/python3 tests/reference/bench_conv.py --lengths 1024,4096 --channels 512 \
        --threads 2 --repeats 10

CPU times are host clocks around the call; GPU times are CUDA events around the transforms and
product on data already on the device (the engine's "gpu comp" column measures the same span).
Each figure is the median of --repeats runs after one warm-up run.

Output: {"torch", "cuda", "threads", "channels", "rows": [{"L", "cpu_ms", "cuda_ms"?}]}.
"""
import argparse
import json
import statistics
import time

import torch


def causal_conv(u, k):
    L = u.shape[-1]
    n = 2 * L
    return torch.fft.irfft(torch.fft.rfft(u, n=n) * torch.fft.rfft(k, n=n), n=n)[..., :L]


def time_cpu(u, k, repeats):
    causal_conv(u, k)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        causal_conv(u, k)
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


def time_cuda(u, k, repeats):
    u, k = u.cuda(), k.cuda()
    causal_conv(u, k)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        causal_conv(u, k)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="1024,4096,16384")
    ap.add_argument("--channels", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    gpu = torch.cuda.is_available()
    out = {"torch": torch.__version__,
           "cuda": torch.cuda.get_device_name(0) if gpu else "no device",
           "threads": a.threads, "channels": a.channels, "rows": []}
    g = torch.Generator().manual_seed(0)
    for L in (int(x) for x in a.lengths.split(",")):
        u = torch.rand(a.channels, L, generator=g) * 2 - 1
        k = (torch.rand(a.channels, L, generator=g) * 2 - 1) * 0.05
        row = {"L": L, "cpu_ms": time_cpu(u, k, a.repeats)}
        if gpu:
            row["cuda_ms"] = time_cuda(u, k, a.repeats)
        out["rows"].append(row)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
