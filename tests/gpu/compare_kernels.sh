#!/usr/bin/env bash
# compare_kernels.sh OLD_SRC [ROUNDS] - the kernel figures of an older tree
# against this one, measured in one call on the same GPU (issue 17's check
# that a restructuring moved no GPU figure by more than 3 %): builds
# OLD_SRC (a copy of the older source tree, e.g. made on the build machine
# with `git -C /work/main archive 514bfec | tar -x -C build-old-src`; any
# build*/ folder is git-ignored and travels with the working tree) and this
# tree, then runs `h5fz_bench_gpu --tiled-kernels` (the tiled array and the
# realistic array) ROUNDS times (default 3)
# each, old and new alternating, and prints the encode/decode GB/s of each
# run and the medians' ratio. JSON and logs go to $OUT (or build-gpu/logs).
set -uo pipefail
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "compare_kernels.sh: no NVIDIA GPU here (nvidia-smi -L failed)" >&2
  exit 77
fi
old_src=$(cd "${1:?usage: compare_kernels.sh OLD_SRC [ROUNDS]}" && pwd)
rounds=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/build-gpu/logs}
mkdir -p "$out"
data=${H5FZ_DATA_DIR:-$root/../shared/data}
if [ -d "$root/.devdata" ] && [ -z "${H5FZ_DATA_DIR:-}" ]; then
  data=/tmp/h5fz-devdata
  mkdir -p "$data"
  for f in "$root"/.devdata/*; do
    case "$f" in *.gz) gunzip -c "$f" > "$data/$(basename "${f%.gz}")" ;; *) cp "$f" "$data/" ;; esac
  done
fi
for side in old new; do
  src=$root; [ "$side" = old ] && src=$old_src
  cmake -S "$src" -B "$root/build-cmp-$side" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
    -DH5FZ_EMBED_KERNELS=OFF \
    > "$out/cmp-configure-$side.log" 2>&1 || { tail -20 "$out/cmp-configure-$side.log"; exit 1; }
  cmake --build "$root/build-cmp-$side" -j"$(nproc)" --target h5fz_bench_gpu > "$out/cmp-build-$side.log" 2>&1 \
    || { grep -E -A5 error "$out/cmp-build-$side.log" | head -40; exit 1; }
done
for r in $(seq 1 "$rounds"); do
  for side in old new; do
    H5FZ_CACHE_DIR="$root/build-cmp-$side/jit-cache" "$root/build-cmp-$side/bin/h5fz_bench_gpu" --data "$data" \
      --tiled-kernels --reps 9 > "$out/cmp-$side-$r.json" 2> "$out/cmp-$side-$r.err" || echo "run $side $r failed"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
fig = {}  # (row, side) -> [(encode, decode)]
for side in ("old", "new"):
    for r in range(1, rounds + 1):
        try:
            j = json.load(open(f"{out}/cmp-{side}-{r}.json"))
        except Exception as e:
            print(f"{side} run {r}: no JSON ({e})")
            continue
        for sec in ("tiled", "realistic"):
            for k in (j.get(sec) or {}).get("kernel", []):
                if "encode_GBps" in k:
                    fig.setdefault((k["field"], side), []).append((k["encode_GBps"], k["decode_GBps"]))
                    print(f"{side} run {r}: {k['field']}: encode {k['encode_GBps']:.1f} GB/s, decode {k['decode_GBps']:.1f} GB/s")
worst = 0.0
for row in sorted({row for row, _ in fig}):
    if (row, "old") not in fig or (row, "new") not in fig:
        continue
    for i, name in enumerate(("encode", "decode")):
        o = statistics.median(x[i] for x in fig[(row, "old")])
        n = statistics.median(x[i] for x in fig[(row, "new")])
        worst = max(worst, abs(n / o - 1))
        print(f"{row} {name}: median old {o:.1f}, new {n:.1f} GB/s, new/old {n / o:.4f}"
              f" ({'within' if abs(n / o - 1) <= 0.03 else 'OUTSIDE'} 3 %)")
print(f"largest difference: {100 * worst:.2f} %")
PY
