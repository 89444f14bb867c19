"""A timeline of one `harness run`: wall seconds since the process started and the process's own CPU
seconds at the start and end of the CLI's and the runner's main functions (wrapped as their modules load),
printed to stderr at exit. bench/RESULTS.md (round 3) measured with it:

    cd bench/speed && PYTHONPATH=$ROOT python timeline.py run --config harness.toml --layer robustness \
        --quiet --no-upload --out /tmp/t --case bench-000
"""
import os, sys, time, subprocess, runpy, functools, asyncio, importlib.abc, importlib.machinery
def age():
    with open("/proc/self/stat") as fh:
        st = int(fh.read().rsplit(")",1)[1].split()[19])
    with open("/proc/uptime") as fh:
        up = float(fh.read().split()[0])
    return up - st/os.sysconf("SC_CLK_TCK")
T0 = time.time() - age()
OUT = []
def stamp(what):
    r = os.times()
    OUT.append(f"[{time.time()-T0:6.3f} cpu {r.user+r.system:.3f}] {what}")
WRAP = {
 "harness.cli.run": ["cmd_run", "_run"],
 "harness.run.early": ["start_early"],
 "harness.run.runner": ["Runner.run", "Runner._bring_up", "Runner._run_cases", "Runner.shut_down", "run_loading"],
 "harness.sandbox.world": ["Sandbox.start", "Sandbox.stop"],
 "harness.targets.http": ["HttpTarget.start", "HttpTarget.stop", "HttpTarget._wait_ready", "HttpTarget._refuse_foreign_listener"],
 "harness.run.late": ["LateReplies._run_quiet", "LateReplies._late_replies"],
 "harness.cli.nightly": ["finish_run"],
 "harness.report": ["write_all"],
 "harness.cli.suite": ["validate_suite"],
 "harness.night.runflow": ["RunFlow.__enter__", "RunFlow.__exit__"],
 "harness.cli.parser": ["build_parser"],
 "harness.config": ["load_config"],
}
ONCE = {"harness.run.driver": ["Driver.deliver"], "harness.run.turns": ["Turns._settle"]}
def wrapfn(owner, name, label, once):
    fn = getattr(owner, name)
    seen = [0]
    if asyncio.iscoroutinefunction(fn):
        async def w(*a, **k):
            seen[0] += 1
            if not once or seen[0] == 1: stamp(f"> {label}")
            try: return await fn(*a, **k)
            finally:
                if not once or seen[0] == 1: stamp(f"< {label}")
    else:
        def w(*a, **k):
            stamp(f"> {label}")
            try: return fn(*a, **k)
            finally: stamp(f"< {label}")
    functools.update_wrapper(w, fn)
    setattr(owner, name, w)
class Loader(importlib.abc.Loader):
    def __init__(self, inner, spec_name): self.inner, self.name = inner, spec_name
    def create_module(self, spec): return self.inner.create_module(spec)
    def __getattr__(self, a): return getattr(self.inner, a)
    def exec_module(self, module):
        self.inner.exec_module(module)
        for table, once in ((WRAP, False), (ONCE, True)):
            for q in table.get(self.name, []):
                parts = q.split("."); owner = module
                for p in parts[:-1]: owner = getattr(owner, p)
                wrapfn(owner, parts[-1], q, once)
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAP and name not in ONCE: return None
        for f in sys.meta_path:
            if f is self: continue
            spec = getattr(f, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None:
                spec.loader = Loader(spec.loader, name); return spec
sys.meta_path.insert(0, Finder())
orig = subprocess.Popen.__init__
def init(self, args, *a, **k):
    stamp(f"spawn {str(args)[:50]}")
    return orig(self, args, *a, **k)
subprocess.Popen.__init__ = init
def done():
    stamp("exit"); print("\n".join(OUT), file=sys.stderr)
import atexit; atexit.register(done)
stamp("start")
sys.argv = ["harness"] + sys.argv[1:]
runpy.run_module("harness.cli", run_name="__main__")
