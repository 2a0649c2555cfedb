// cuszp_bench.cu - times cuSZp (github:szcompressor/cuSZp, built from its
// public sources by bench/suite/build_peers.sh; never committed here) on a
// raw float32 file with data already on the GPU, the way h5fz_bench_gpu
// times h5fz's kernels: CUDA events around each cuSZp_compress /
// cuSZp_decompress call, one warm-up, the median of REPS. Writes the
// decompressed values to OUT for bench/suite/peers.py to check element by
// element, and prints one JSON object.
//   cuszp_bench IN.f32 ABS_BOUND plain|outlier REPS OUT.f32
// Copyright (c) 2026 the h5fz authors. BSD 3-Clause License.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <cuSZp.h>

static void check(cudaError_t e, const char *what)
{
  if (e != cudaSuccess) {
    std::printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

static double median(std::vector<float> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv)
{
  if (argc != 6) {
    std::fprintf(stderr, "usage: cuszp_bench IN.f32 ABS_BOUND plain|outlier REPS OUT.f32\n");
    return 2;
  }
  FILE *f = std::fopen(argv[1], "rb");
  if (!f) {
    std::printf("{\"error\": \"cannot open %s\"}\n", argv[1]);
    return 1;
  }
  std::fseek(f, 0, SEEK_END);
  size_t bytes = (size_t)std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  size_t n = bytes / sizeof(float);
  std::vector<float> host(n);
  if (std::fread(host.data(), sizeof(float), n, f) != n) {
    std::printf("{\"error\": \"short read of %s\"}\n", argv[1]);
    return 1;
  }
  std::fclose(f);
  float eb = (float)std::atof(argv[2]);
  cuszp_mode_t mode = !std::strcmp(argv[3], "outlier") ? CUSZP_MODE_OUTLIER : CUSZP_MODE_PLAIN;
  int reps = std::max(1, std::atoi(argv[4]));
  float *d_in = nullptr, *d_out = nullptr;
  unsigned char *d_cmp = nullptr;
  check(cudaMalloc(&d_in, bytes), "cudaMalloc");
  check(cudaMalloc(&d_out, bytes), "cudaMalloc");
  // cuSZp's worst case is about the input size plus per-block headers
  size_t cmp_cap = bytes + bytes / 8 + (1u << 20);
  check(cudaMalloc(&d_cmp, cmp_cap), "cudaMalloc");
  check(cudaMemcpy(d_in, host.data(), bytes, cudaMemcpyHostToDevice), "copy to GPU");
  cudaStream_t stream;
  cudaEvent_t e0, e1;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  uint3 dims = {0, 0, 0};
  size_t cmp_size = 0;
  std::vector<float> tc, td;
  for (int r = -1; r < reps; r++) {  // r = -1 warms up
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    cuSZp_compress(d_in, d_cmp, n, &cmp_size, eb, CUSZP_DIM_1D, dims, CUSZP_TYPE_FLOAT, mode, stream);
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "compress");
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 0) tc.push_back(ms);
  }
  for (int r = -1; r < reps; r++) {
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    cuSZp_decompress(d_out, d_cmp, n, cmp_size, eb, CUSZP_DIM_1D, dims, CUSZP_TYPE_FLOAT, mode, stream);
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "decompress");
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 0) td.push_back(ms);
  }
  check(cudaGetLastError(), "cuSZp kernels");
  check(cudaMemcpy(host.data(), d_out, bytes, cudaMemcpyDeviceToHost), "copy back");
  FILE *o = std::fopen(argv[5], "wb");
  if (!o || std::fwrite(host.data(), sizeof(float), n, o) != n || std::fclose(o)) {
    std::printf("{\"error\": \"cannot write %s\"}\n", argv[5]);
    return 1;
  }
  double mc = median(tc), md = median(td);
  std::printf("{\"bytes\": %zu, \"compressed_bytes\": %zu, \"ratio\": %.4f, \"mode\": \"%s\", \"abs_bound\": %.9g, "
              "\"compress_ms\": %.4f, \"decompress_ms\": %.4f, \"compress_GBps\": %.1f, \"decompress_GBps\": %.1f, "
              "\"reps\": %d}\n",
              bytes, cmp_size, (double)bytes / (double)cmp_size, argv[3], (double)eb, mc, md, bytes / mc / 1e6,
              bytes / md / 1e6, reps);
  return 0;
}
