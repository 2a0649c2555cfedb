"""bench/mpi/shared_file_write.py [MB] [DIR...]: how fast 1 and 8 processes
write their shares of MB megabytes (default 331: what 8 ranks x 1 GiB of the
MPI benchmark store at ratio 26) with pwrite at disjoint offsets into one
file, into one file whose pages exist already, and into a file each, in each
DIR (default /dev/shm): the floor under any collective write into one file
there (Linux serialises buffered writes to one file on its inode lock)."""
import os, sys, time, multiprocessing as mp
def worker(i, n, share, path, shared, bar, q):
    buf = os.urandom(1 << 20) * (share >> 20)
    fn = path if shared else "%s.%d" % (path, i)
    fd = os.open(fn, os.O_WRONLY | os.O_CREAT, 0o644)
    bar.wait(); t0 = time.perf_counter()
    off = i * share if shared else 0
    os.pwrite(fd, buf, off)
    t1 = time.perf_counter(); bar.wait(); t2 = time.perf_counter()
    os.close(fd); q.put((t1 - t0, t2 - t0))
def run(n, total, d, shared, rewrite=False):
    path = os.path.join(d, "h5fz_shared_write.bin")
    if not rewrite:
        for f in [path] + ["%s.%d" % (path, i) for i in range(n)]:
            try: os.remove(f)
            except FileNotFoundError: pass
    share = total // n >> 20 << 20
    bar = mp.Barrier(n); q = mp.Queue()
    ps = [mp.Process(target=worker, args=(i, n, share, path, shared, bar, q)) for i in range(n)]
    [p.start() for p in ps]; r = [q.get() for _ in ps]; [p.join() for p in ps]
    wall = max(x[1] for x in r)
    print("%s %d procs %s%s: %.0f MB in %.3f s = %.2f GB/s" % (d, n, "one file" if shared else "a file each",
          " (pages exist)" if rewrite else "", n * share / 1e6, wall, n * share / wall / 1e9), flush=True)
total = int(float(sys.argv[1]) * 1e6) if len(sys.argv) > 1 else 331_000_000
for d in sys.argv[2:] or ["/dev/shm"]:
    for n in (1, 8):
        run(n, total, d, True); run(n, total, d, True, rewrite=True); run(n, total, d, False)
