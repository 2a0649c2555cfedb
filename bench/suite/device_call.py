#!/usr/bin/env python3
"""Run one recorded device call again from its plan (a JSON file beside the
results it made, bench/suite/results/*/session*/sN_callM.json).

Usage: python3 bench/suite/device_call.py PLAN.json [--out DIR] [--print]

From the repository root, on the device machine. A plan is data: what the
call measured ("what"), then its steps; this script is the one program
that turns any plan into the commands. --print lists the commands without
running them. The call's logs go to a fresh folder (PLAN's name under
$TMPDIR) and, packed as callM.tgz, to --out (default $OUT), as the
original calls did; a summary line per run goes to stdout.

A plan's keys (all but "steps" optional):
  what          one line: what the call measured
  commit        the code it ran at (for the record; not checked out)
  build         {"targets": [...], "python": true}: the parallel HDF5 of
                .devrun/phdf5 set up (bench/mpi/phdf5_env.sh), the real fields
                found (tests/gpu/devdata.sh), and the MPI build made in
                build-mpi-bench with these targets (python: H5FZ_PYTHON too)
  env           variables for every step after the build
  profile       true: H5FZ_MPI_PROFILE=1 for the runs (their .err files)
  warm          [[args...], ...]: small bench_mpi runs before the timed
                ones (JIT cache and files warm), one per entry
  reps, paths, run_timeout_s, gib_per_rank: the runs' defaults
  steps         in order, each one of
    {"run": LABEL, "ranks": N, "env": {...}, "args": [...]}
        mpirun -n N bench_mpi ... --label LABEL > LABEL.json 2> LABEL.err;
        "paths", "reps" override the defaults; "wrapper": "perf" records
        each rank with perf record -g (perf.RANK.data, removed before packing)
    {"mps": [steps...]}  the steps under the CUDA MPS daemon (started,
        then quit); skipped with a line where it cannot start
    {"ctest": "ARGS", "env": {...}, "timeout_s": T, "log": NAME}
        ctest --test-dir build-mpi-bench ARGS --output-on-failure > NAME
    {"shell": "COMMAND", "env": {...}, "timeout_s": T, "log": NAME}
        bash -c COMMAND (in the repository root, $log the call's folder)
    {"perf_system": LABEL, "ranks": N, "args": [...]}  perf record -a -g
        around one run, the top of its report in perf_top.txt (where perf is)
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time

BUILD = "build-mpi-bench"
RUN_DEFAULTS = {"reps": 1, "paths": "api_host,api_pinned,api_device", "run_timeout_s": 100, "gib_per_rank": 1}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
MPS_ENV = {"CUDA_MPS_PIPE_DIRECTORY": "/tmp/h5fz-mps-pipe", "CUDA_MPS_LOG_DIRECTORY": "/tmp/h5fz-mps-log"}
RESULT = re.compile(r'"path": "([a-z_]*)", "write_s": ([0-9.]*), "read_s": ([0-9.]*), "write_GBps": ([0-9.]*)')


class Call:
    """One plan's run: the environment after the build, the log folder."""

    def __init__(self, plan, log, dry):
        self.plan, self.log, self.dry = plan, log, dry
        self.env = dict(os.environ)
        self.t0 = time.time()
        self.data = None

    def say(self, text):
        print(text, flush=True)

    def sh(self, command, env=None, log=None, timeout=None):
        """bash -c command; its output to log (a file in the call's folder) or
        stdout. The exit status (124 past timeout)."""
        if self.dry:
            self.say("$ " + " ".join("%s=%s" % kv for kv in (env or {}).items()) + (" " if env else "") + command
                     + (" > " + log if log else ""))
            return 0
        full = dict(self.env, **(env or {}), log=self.log)
        out = open(os.path.join(self.log, log), "w") if log else None
        try:
            return subprocess.run(["bash", "-c", command], env=full, stdout=out or None,
                                  stderr=subprocess.STDOUT if out else None, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return 124
        finally:
            if out:
                out.close()

    def build(self, spec):
        """The parallel HDF5, the real fields and the MPI build; the
        environment they leave is kept for the later steps."""
        targets = " ".join(spec.get("targets", ["h5fz_bench_mpi", "h5fz_plugin"]))
        python = ' -DH5FZ_PYTHON="$(command -v python3)"' if spec.get("python") else ""
        script = (
            'root=$PWD; b=$root/%s\n'
            '. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }\n'
            '. tests/gpu/devdata.sh; h5fz_use_devdata "$root"\n'
            'cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$H5FZ_DATA_DIR" '
            '-DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}"%s > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }\n'
            'cmake --build $b -j"$(nproc)" --target %s > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }\n'
            'env -0 > $log/.env\n') % (BUILD, python, targets)
        if self.sh(script) != 0:
            raise SystemExit("device_call: the build failed (its logs are in %s)" % self.log)
        if not self.dry:
            with open(os.path.join(self.log, ".env"), "rb") as fh:
                pairs = [kv.split("=", 1) for kv in fh.read().decode().split("\0") if "=" in kv]
            os.remove(os.path.join(self.log, ".env"))
            self.env = dict(pairs)
        self.data = "$H5FZ_DATA_DIR"
        bdir = os.path.join(os.getcwd(), BUILD)
        self.env.update(MPI_ENV, H5FZ_CACHE_DIR=bdir + "/jit-cache", HDF5_PLUGIN_PATH=bdir + "/plugin")
        self.say("built after %d s" % (time.time() - self.t0))

    def bench_command(self, ranks, args, wrapper=""):
        return "mpirun -n %d %s%s/bin/h5fz_bench_mpi --data \"$H5FZ_DATA_DIR\" %s" % (
            ranks, wrapper, BUILD, " ".join(shlex.quote(a) for a in args))

    def run(self, step):
        p = dict(RUN_DEFAULTS, **{k: v for k, v in self.plan.items() if k in RUN_DEFAULTS})
        p.update({k: v for k, v in step.items() if k in RUN_DEFAULTS})
        label, ranks = step["run"], step["ranks"]
        args = ["--gib-per-rank", str(p["gib_per_rank"]), "--reps", str(p["reps"]), "--dir", "/dev/shm",
                "--label", label, "--paths", p["paths"]] + step.get("args", [])
        wrapper = ""
        if step.get("wrapper") == "perf":
            wrapper = 'bash -c \'exec perf record -g -o "$log/perf.$OMPI_COMM_WORLD_RANK.data" -- "$@"\' _ '
        env = dict(step.get("env", {}))
        if self.plan.get("profile"):
            env.setdefault("H5FZ_MPI_PROFILE", "1")
        cmd = "timeout %d %s > $log/%s.json 2> $log/%s.err" % (
            p["run_timeout_s"], self.bench_command(ranks, args, wrapper), label, label)
        rc = self.sh(cmd, env)
        if self.dry:
            return
        with open(os.path.join(self.log, label + ".json"), errors="replace") as fh:
            figures = " ".join("%s %s w" % (m[0], m[3]) for m in RESULT.findall(fh.read()))
        self.say("== %s (%d ranks, rc %d, %d s): %s" % (label, ranks, rc, time.time() - self.t0, figures))

    def mps(self, steps):
        env = dict(MPS_ENV)
        if self.sh("mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY && nvidia-cuda-mps-control -d", env):
            self.say("no MPS: nvidia-cuda-mps-control -d failed; its steps skipped")
            return
        self.env.update(env)
        try:
            for s in steps:
                self.step(s)
        finally:
            self.sh("echo quit | nvidia-cuda-mps-control")
            for k in env:
                self.env.pop(k, None)

    def ctest(self, step):
        log = step.get("log", "ctest.log")
        rc = self.sh("ctest --test-dir %s %s --output-on-failure" % (BUILD, step["ctest"]), step.get("env"), log,
                     step.get("timeout_s", 150))
        if not self.dry:
            with open(os.path.join(self.log, log), errors="replace") as fh:
                text = fh.read()
            self.say("ctest %s rc %d: %d passed, %d skipped" % (step["ctest"], rc, text.count(" Passed "),
                                                                 text.count("***Skipped") + text.count("Not Run")))

    def shell(self, step):
        rc = self.sh(step["shell"], step.get("env"), step.get("log"), step.get("timeout_s"))
        self.say("%s: rc %d after %d s" % (step.get("log") or step["shell"][:60], rc, time.time() - self.t0))

    def perf_system(self, step):
        if self.sh("command -v perf > /dev/null"):
            self.say("no perf on this machine")
            return
        label = step["perf_system"]
        args = ["--gib-per-rank", "1", "--reps", "3", "--dir", "/dev/shm"] + step.get("args", [])
        self.sh("perf record -a -g -o $log/perf.data -- timeout 100 %s > $log/%s.json 2> $log/%s.err" % (
            self.bench_command(step["ranks"], args), label, label))
        self.sh("perf report -i $log/perf.data --no-children --sort comm,dso,sym --stdio 2> /dev/null "
                "| grep -v '^$' | grep '%' | head -60 > $log/perf_top.txt")

    def step(self, s):
        for key, fn in (("run", self.run), ("ctest", self.ctest), ("shell", self.shell),
                        ("perf_system", self.perf_system)):
            if key in s:
                return fn(s)
        if "mps" in s:
            return self.mps(s["mps"])
        raise SystemExit("device_call: a step with none of run, mps, ctest, shell, perf_system: %s" % json.dumps(s))


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    dry = "--print" in argv
    out = os.environ.get("OUT", ".")
    if "--out" in argv:
        out = argv[argv.index("--out") + 1]
        args.remove(out)
    if len(args) != 1:
        print(__doc__)
        return 2
    with open(args[0]) as fh:
        plan = json.load(fh)
    name = os.path.splitext(os.path.basename(args[0]))[0]
    log = os.path.join(os.environ.get("TMPDIR", "/tmp"), "h5fz-" + name)
    if not dry:
        subprocess.run(["rm", "-rf", log], check=True)
        os.makedirs(log)
    call = Call(plan, log, dry)
    call.say("%s: %s" % (name, plan.get("what", "")))
    if "build" in plan:
        call.build(plan["build"])
    call.env.update(plan.get("env", {}))
    for warm in plan.get("warm", []):
        call.sh("%s > /dev/null 2>&1" % call.bench_command(1, ["--gib-per-rank", "0.01", "--reps", "1", "--dir",
                                                               "/dev/shm"] + warm))
    for s in plan["steps"]:
        call.step(s)
    call.say("total %d s" % (time.time() - call.t0))
    if not dry:
        for f in os.listdir(log):
            if f.startswith("perf.") and f.endswith(".data"):
                os.remove(os.path.join(log, f))
        with tarfile.open(os.path.join(out, re.sub(r"^s\d+_", "", name) + ".tgz"), "w:gz") as tar:
            tar.add(log, arcname=".")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
