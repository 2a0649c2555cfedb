/*
 * test_gpu_dataset_devptr.c - the dataset API with a CUDA device array.
 *
 * The embedded field (and a copy with NaN/Inf/huge values) is uploaded with
 * the Driver API, written by h5fz_dataset_write(H5FZ_MEM_DEVICE) and, from
 * host memory, by h5fz_dataset_write(H5FZ_MEM_HOST) and by H5Dwrite through
 * the filter; all three datasets must hold byte-identical chunks. Then
 * h5fz_dataset_read(H5FZ_MEM_DEVICE) decodes into device memory, and the
 * values copied back must equal the host read bit for bit. ABS and REL (whose
 * per-chunk ranges come from a kernel), and lorenzo_nd chains (batched:
 * each chunk's predictor from its own cost pass, chunks of 6 full
 * sub-chunks and of 2 full and a partial one). Skips (77) without a usable
 * GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"
#include "h5fz_cuda.h"
#include "h5fz_dataset.h"

static const h5fz_cuda_api *cu;

static int chunks_equal(hid_t a, hid_t b, size_t n_chunks_max, const hsize_t *dims, const hsize_t *chunk)
{
  size_t grid[3], n = 1, same = 0;
  for (int d = 0; d < 3; d++) {
    grid[d] = (dims[d] + chunk[d] - 1) / chunk[d];
    n *= grid[d];
  }
  (void)n_chunks_max;
  for (size_t k = 0; k < n; k++) {
    hsize_t off[3], sa = 0, sb = 0;
    size_t rest = k;
    for (int d = 3; d-- > 0;) {
      off[d] = rest % grid[d] * chunk[d];
      rest /= grid[d];
    }
    H5Dget_chunk_storage_size(a, off, &sa);
    H5Dget_chunk_storage_size(b, off, &sb);
    if (sa != sb || !sa) continue;
    uint8_t *ba = malloc(sa), *bb = malloc(sb);
    uint32_t m = 0;
    H5Dread_chunk(a, H5P_DEFAULT, off, &m, ba);
    H5Dread_chunk(b, H5P_DEFAULT, off, &m, bb);
    same += !memcmp(ba, bb, sa);
    free(ba);
    free(bb);
  }
  FT_CHECK(same == n, "%zu of %zu chunks identical", same, n);
  return (int)same;
}

static void run_shaped(hid_t file, const char *tag, const char *spec, const float *host, size_t n,
                       const hsize_t dims_in[3], const hsize_t chunk_in[3])
{
  hsize_t dims[3] = {dims_in[0], dims_in[1], dims_in[2]}, chunk[3] = {chunk_in[0], chunk_in[1], chunk_in[2]};
  size_t bytes = n * 4;
  CUdeviceptr din = 0, dout = 0;
  FT_CHECK(!cu->cuMemAlloc(&din, bytes) && !cu->cuMemAlloc(&dout, bytes), "cuMemAlloc");
  FT_CHECK(!cu->cuMemcpyHtoDAsync(din, host, bytes, NULL) && !cu->cuStreamSynchronize(NULL), "upload");
  char name[3][64];
  hid_t d[3];
  h5fz_dataset_report rep[2];
  for (int i = 0; i < 3; i++) {
    snprintf(name[i], sizeof name[i], "%s_%s", tag, i == 0 ? "device" : i == 1 ? "host" : "filter");
    FT_CHECK(h5fz_dataset_create(file, name[i], H5T_NATIVE_FLOAT, 3, dims, chunk, spec, &d[i]) == H5FZ_OK,
             "create %s: %s", name[i], h5fz_last_error());
  }
  FT_CHECK(h5fz_dataset_write(d[0], (const void *)(uintptr_t)din, H5FZ_MEM_DEVICE, &rep[0]) == H5FZ_OK,
           "%s: device write: %s", tag, h5fz_last_error());
  FT_CHECK(h5fz_dataset_write(d[1], host, H5FZ_MEM_HOST, &rep[1]) == H5FZ_OK, "%s: host write: %s", tag,
           h5fz_last_error());
  FT_CHECK(H5Dwrite(d[2], H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, host) >= 0, "%s: H5Dwrite", tag);
  FT_CHECK(rep[0].on_gpu && rep[1].on_gpu, "%s: the API did not run on the GPU (%s / %s)", tag, rep[0].kernel_class,
           rep[1].kernel_class);
  H5Fflush(file, H5F_SCOPE_GLOBAL);
  int same_dh = chunks_equal(d[0], d[1], 0, dims, chunk), same_df = chunks_equal(d[0], d[2], 0, dims, chunk);
  float *back_host = malloc(bytes), *back_dev = malloc(bytes);
  FT_CHECK(h5fz_dataset_read(d[2], back_host, H5FZ_MEM_HOST, NULL) == H5FZ_OK, "%s: host read: %s", tag,
           h5fz_last_error());
  FT_CHECK(h5fz_dataset_read(d[2], (void *)(uintptr_t)dout, H5FZ_MEM_DEVICE, NULL) == H5FZ_OK, "%s: device read: %s",
           tag, h5fz_last_error());
  FT_CHECK(!cu->cuMemcpyDtoHAsync(back_dev, dout, bytes, NULL) && !cu->cuStreamSynchronize(NULL), "download");
  FT_CHECK(memcmp(back_host, back_dev, bytes) == 0, "%s: device read differs from host read", tag);
  float *back_pinned = NULL;
  if (!cu->cuMemAllocHost((void **)&back_pinned, bytes)) {
    memset(back_pinned, 0x5a, bytes);
    FT_CHECK(h5fz_dataset_read(d[2], back_pinned, H5FZ_MEM_HOST, NULL) == H5FZ_OK, "%s: pinned read: %s", tag,
             h5fz_last_error());
    FT_CHECK(memcmp(back_host, back_pinned, bytes) == 0, "%s: read into pinned memory differs from host read", tag);
    cu->cuMemFreeHost(back_pinned);
  }
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (isnan(host[i]) ? !isnan(back_dev[i]) : isinf(host[i]) ? host[i] != back_dev[i] : 0) bad++;
  FT_CHECK(bad == 0, "%s: %zu NaN/Inf not restored", tag, bad);
  printf("  %s: %s, %llu chunks, device write = host write (%d chunks), = filter (%d chunks), device read = host "
         "read, ratio %.2f, class %s, digest %s\n",
         tag, spec, (unsigned long long)rep[0].n_chunks, same_dh, same_df,
         (double)rep[0].input_bytes / (double)rep[0].stored_bytes, rep[0].kernel_class, rep[0].plan_digest);
  for (int i = 0; i < 3; i++) H5Dclose(d[i]);
  cu->cuMemFree(din);
  cu->cuMemFree(dout);
  free(back_host);
  free(back_dev);
}

static const hsize_t field_dims[3] = {50, 100, 100};

static void run_chunked(hid_t file, const char *tag, const char *spec, const float *host, size_t n,
                        const hsize_t chunk[3])
{
  run_shaped(file, tag, spec, host, n, field_dims, chunk);
}

static void run(hid_t file, const char *tag, const char *spec, const float *host, size_t n)
{
  static const hsize_t chunk[3] = {8, 48, 64};
  run_chunked(file, tag, spec, host, n, chunk);
}

int main(void)
{
  const char *why = NULL;
  cu = h5fz_cuda_get(&why);
  CUdevice dev;
  CUcontext ctx;
  int count = 0;
  if (!cu || cu->cuInit(0) || cu->cuDeviceGetCount(&count) || count < 1) {
    printf("SKIP: no usable GPU (%s)\n", why ? why : "no device");
    return 77;
  }
  if (cu->cuDeviceGet(&dev, 0) || cu->cuDevicePrimaryCtxRetain(&ctx, dev) || cu->cuCtxSetCurrent(ctx)) {
    printf("SKIP: cannot make the primary context current\n");
    return 77;
  }
  if (ft_begin("gpu_dataset_devptr")) return 1;
  FILE *f = fopen(H5FZ_EMBEDDED_FIELD, "rb");
  size_t n = 50u * 100u * 100u;
  float *field = malloc(n * 4), *special = malloc(n * 4);
  if (!f || fread(field, 4, n, f) != n) return 1;
  fclose(f);
  memcpy(special, field, n * 4);
  special[5] = NAN;
  special[77777] = INFINITY;
  special[123456] = 3e38f;
  hid_t file = ft_create_file("gpu_devptr");
  run(file, "abs", "abs=1e-5", field, n);
  run(file, "rel", "rel=1e-4", field, n);
  run(file, "specials", "abs=1e-5", special, n);
  /* lorenzo_nd: 6 full sub-chunks a chunk, then 2 full and a partial one (5 x 33 x 70) */
  static const hsize_t odd[3] = {5, 33, 70};
  run(file, "lnd", "abs=1e-5 lorenzo_nd zigzag bitshuffle rze", field, n);
  run(file, "lnd_rel", "rel=1e-4 lorenzo_nd zigzag bitshuffle rze", field, n);
  run_chunked(file, "lnd_specials", "abs=1e-5 lorenzo_nd zigzag bitshuffle rze", special, n, odd);
  run_chunked(file, "lnd_bitpack", "abs=1e-4 lorenzo_nd zigzag bitpack", special, n, odd);
  /* rows of one line: every chunk takes the 1-D predictor (the others tie with it), the warp-fused
   * kernels' lorenzo_nd form (4 full sub-chunks and a partial one a chunk) */
  static const hsize_t row_dims[3] = {1, 1, 500000}, row_chunk[3] = {1, 1, 20000};
  run_shaped(file, "lnd_1d", "abs=1e-5 lorenzo_nd zigzag bitshuffle rze", special, n, row_dims, row_chunk);
  /* a page-locked host array: the API moves its slabs without staging */
  float *pinned = NULL;
  FT_CHECK(!cu->cuMemAllocHost((void **)&pinned, n * 4), "cuMemAllocHost");
  if (pinned) {
    memcpy(pinned, field, n * 4);
    run(file, "pinned", "abs=1e-5", pinned, n);
    run(file, "pinned_rel", "rel=1e-4", pinned, n);
    run(file, "pinned_lnd", "abs=1e-5 lorenzo_nd zigzag bitshuffle rze", pinned, n);
    cu->cuMemFreeHost(pinned);
  }
  H5Fclose(file);
  free(field);
  free(special);
  return ft_finish();
}
