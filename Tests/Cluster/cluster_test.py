#!/usr/bin/env python3
"""The cluster recipes of docs/batch.md, run for real: a Slurm job array and GNU parallel on this machine.

Usage: python3 Tests/Cluster/cluster_test.py --koe .build/release/koe [--keep]
(`make test-cluster` installs slurm-wlm, munge and parallel from Debian and runs it.)

It brings up a single-node Slurm on localhost: munged, slurmctld and slurmd, started here as plain
processes with their key, socket, configuration (Tests/Cluster/slurm.conf.in), state and logs in one
temporary folder, and stopped by PID when the test ends, however it ends. The corpus is 20 short
speech files made with espeak-ng and sox (WAV and FLAC, 16 and 22.05 kHz, in two folders).

The scripts are the documentation's own: the `#SBATCH --array` block and the `parallel -S ...` line are
read from docs/batch.md, and only the paths, the array size (16 -> 4) and the machines (`-S :`, this one) are
changed; a page that no longer has them fails the test. The `koe` on their PATH is --koe.

  slurm           the array converts the corpus; every task completes with exit code 0.
  slurm-cancel    the array again into a new folder; one task is cancelled (scancel) once it has
                  converted some of its inputs but not all; then the array is resubmitted.
  parallel        the parallel line converts the corpus.
  parallel-kill   the parallel line again into a new folder; one shard's koe is ended (SIGTERM to its
                  processes, as scancel does) once it has converted some of its inputs; then the line
                  is run again.

After each, in the output folder: every input has its output (same relative path, readable by
libsndfile, the input's rate, channels and length in frames, not silent) and nothing else is there but
the N shard manifests; each manifest line belongs to its shard (inputs I, I+N, ... of the sorted list);
each input is recorded `ok` exactly once over all runs and never `failed`. After a cancel or kill the
rerun must have skipped what was done (a `skipped` line for each input recorded ok before it, and
those outputs untouched: same inode and modification time) and converted the rest.

Exits non-zero when a check fails, with one line saying why; the last line reads
`cluster: N passed, M failed`.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Harness"))
from harness import (REPOSITORY, Children, Failure, Suite, cannot_run, check, missing_tools,  # noqa: E402
                     option_parser, run)

CONFIG_TEMPLATE = Path(__file__).resolve().parent / "slurm.conf.in"
ARRAY_SIZE = 4           # the page's 16, cut to the size of this corpus
PARALLEL_SHARDS = 3      # as the page's line has it
WAIT_SECONDS = 300       # for any one array or parallel run; a run past this is a hang
POLL_SECONDS = 0.02

# The corpus: (speaker folder, espeak-ng voice, pitch, extension, rate). Ten clips each; the sentence
# is said once, twice or (for the last four inputs in sorted order) eight times, so that a shard's last
# input is still converting well after its first ones are done: there is a "midway" to cancel at.
SPEAKERS = [("spk1", "en-us+f3", 70, "wav", 16000), ("spk2", "en+m3", 30, "flac", 22050)]
SENTENCES = [
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It is easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "A large size in stockings is hard to sell.",
]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the daemons -----------------------------------------------------------------------------------

class Daemons(Children):
    """munged, slurmctld and slurmd as child processes, each in the foreground, stopped by PID; what they print
    goes to log/console, what they log to log."""

    def __init__(self, root):
        super().__init__(root / "log" / "console", dict(os.environ, SLURM_CONF=str(root / "etc/slurm.conf")),
                         stop_seconds=15)
        self.root = root

    def start(self, name, argv):
        return super().start(name, argv, cwd=self.root)

    def check_alive(self):
        for name, process in self.processes:
            if process.poll() is not None:
                raise Failure(f"{name} exited with status {process.returncode}: {self.log_tail(name)}")

    def log_tail(self, name):
        lines = []
        for path in (self.folder / f"{name}.log", self.root / "log" / f"{name}.log"):
            if path.exists():
                lines += [line for line in path.read_text(errors="replace").splitlines() if "error" in line.lower()]
        return lines[-1] if lines else f"(see {self.root}/log)"

    def up(self):
        (self.root / "munge").mkdir()
        (self.root / "munge").chmod(0o755)   # munged wants its socket's folder searchable by all
        key = self.root / "munge/munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        socket_path = self.root / "munge/munge.socket"
        self.start("munged", ["munged", "--foreground", f"--socket={socket_path}", f"--key-file={key}",
                              f"--pid-file={self.root}/munge/munged.pid", f"--seed-file={self.root}/munge/munged.seed",
                              f"--log-file={self.root}/log/munged.log"])
        self.wait_for(lambda: socket_path.exists(), "munged's socket")
        roundtrip = subprocess.run(f"munge -n -S {socket_path} | unmunge -S {socket_path}", shell=True,
                                   capture_output=True, text=True)
        check(roundtrip.returncode == 0, f"munge/unmunge round trip failed: {roundtrip.stderr.strip()}")

        config = self.root / "etc/slurm.conf"
        for folder in ("etc", "slurm/state", "slurm/spool"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        host = socket.gethostname().split(".")[0]
        text = CONFIG_TEMPLATE.read_text()
        for field, value in (("@TMP@", str(self.root)), ("@HOST@", host), ("@CTLD_PORT@", str(free_port())),
                             ("@SLURMD_PORT@", str(free_port()))):
            text = text.replace(field, value)
        check(not re.search(r"@[A-Z_]+@", text), "slurm.conf.in has a field the test does not fill in")
        config.write_text(text)
        self.start("slurmctld", ["slurmctld", "-D", "-f", str(config)])
        self.start("slurmd", ["slurmd", "-D", "-N", "koenode", "-f", str(config)])

        def node_idle():
            state = subprocess.run(["sinfo", "-h", "-n", "koenode", "-o", "%t"], capture_output=True, text=True,
                                   env=self.environment)
            return state.returncode == 0 and state.stdout.strip() == "idle"
        self.wait_for(node_idle, "node koenode idle in sinfo", seconds=60)

    def wait_for(self, ready, what, seconds=30):
        """Children.wait_for, failing at once when a daemon exits meanwhile."""
        def alive_and_ready():
            self.check_alive()
            return ready()
        super().wait_for(alive_and_ready, what, seconds)

    def down(self):
        """Cancels whatever jobs are left, then ends the daemons, newest first: SIGTERM, SIGKILL after 15 s."""
        if any(name == "slurmctld" and process.poll() is None for name, process in self.processes):
            subprocess.run(["scancel", "--user", "root"], env=self.environment, capture_output=True)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                queue = subprocess.run(["squeue", "-h"], env=self.environment, capture_output=True, text=True)
                if queue.returncode != 0 or not queue.stdout.strip():
                    break
                time.sleep(0.2)
        self.stop_all()


# --- the corpus and docs/batch.md's recipes ----------------------------------------------------------

def make_corpus(folder):
    """20 inputs; returns their paths relative to `folder`, sorted as koe sorts them."""
    scratch = folder.parent / "espeak"
    scratch.mkdir()
    spoken = {}
    for speaker, voice, pitch, extension, rate in SPEAKERS:
        (folder / speaker).mkdir(parents=True)
        for number, sentence in enumerate(SENTENCES, start=1):
            name = f"{speaker}/clip-{number:02d}.{extension}"
            spoken[name] = (scratch / f"{speaker}-{number:02d}.wav", rate)
            run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", "160", "-w", spoken[name][0], sentence])
    inputs = sorted(spoken)
    for index, name in enumerate(inputs):
        source, rate = spoken[name]
        times = 8 if index >= len(inputs) - 4 else 1 + index % 2
        repeat = ["repeat", str(times - 1)] if times > 1 else []
        run(["sox", "-D", source, "-b", "16", "-c", "1", folder / name, "rate", "-v", str(rate), "norm", "-6"] + repeat)
    return inputs


def readme_block(pattern):
    """The fenced code block of docs/batch.md that contains `pattern`."""
    readme = (REPOSITORY / "docs/batch.md").read_text()
    for block in re.findall(r"```[a-z]*\n(.*?)```", readme, flags=re.S):
        if pattern in block:
            return block
    raise Failure(f"docs/batch.md has no code block with {pattern!r}")


def replace_once(text, old, new, what):
    check(text.count(old) == 1, f"docs/batch.md's {what} no longer has {old!r} exactly once; update the test with it")
    return text.replace(old, new)


def slurm_script(corpus, output):
    script = readme_block("#SBATCH --array")
    script = re.sub(r"#SBATCH --array=1-\d+", f"#SBATCH --array=1-{ARRAY_SIZE}", script)
    check(f"--array=1-{ARRAY_SIZE}" in script, "docs/batch.md's Slurm script has no `#SBATCH --array=1-N` line")
    script = replace_once(script, "/shared/augmented", str(output), "Slurm script")
    return replace_once(script, "/shared/corpus", str(corpus), "Slurm script")


def parallel_line():
    block = readme_block("parallel -S")
    lines = [line for line in block.splitlines() if line.startswith("parallel ")]
    check(len(lines) == 1, "docs/batch.md's GNU parallel block should hold one `parallel` line")
    line = re.sub(r"-S \S+", "-S :", lines[0])
    check(f"::: {' '.join(str(i) for i in range(1, PARALLEL_SHARDS + 1))}" in line,
          f"docs/batch.md's parallel line no longer splits in {PARALLEL_SHARDS}")
    return line


# --- what a run leaves -------------------------------------------------------------------------------

def manifest_records(output, shards):
    """shard -> list of records; checks the folder holds exactly the N shard manifests."""
    manifests = sorted(p.name for p in output.glob("koe-manifest*"))
    expected = sorted(f"koe-manifest.shard-{i}-of-{shards}.jsonl" for i in range(1, shards + 1))
    check(manifests == expected, f"{output}: manifests {manifests}, expected {expected}")
    records = {}
    for shard in range(1, shards + 1):
        path = output / f"koe-manifest.shard-{shard}-of-{shards}.jsonl"
        records[shard] = []
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            try:
                records[shard].append(json.loads(line))
            except json.JSONDecodeError:
                raise Failure(f"{path.name} line {number} is not JSON: {line[:80]!r}")
    return records


def check_outputs(corpus, inputs, output, shards, input_prefix):
    """The checks every run's folder must pass; returns shard -> records."""
    for name in inputs:
        target = output / name
        check(target.is_file(), f"{target} is missing")
        try:
            got = soundfile.info(str(target))
        except RuntimeError as error:
            raise Failure(f"{target} is not readable audio: {error}")
        source = soundfile.info(str(corpus / name))
        check((got.samplerate, got.channels) == (source.samplerate, source.channels),
              f"{name}: {got.samplerate} Hz x {got.channels} out of {source.samplerate} Hz x {source.channels}")
        check(got.frames == source.frames, f"{name}: {got.frames} frames out of {source.frames} in (incomplete)")
        samples, _ = soundfile.read(str(target))
        check(abs(samples).max() > 0.01, f"{name}: the output is silent")
    extra = sorted(str(p.relative_to(output)) for p in output.rglob("*")
                   if p.is_file() and not p.name.startswith("koe-manifest")
                   and str(p.relative_to(output)) not in inputs)
    check(not extra, f"{output} holds files that are no output: {extra[:3]} (temporary files left behind?)")

    records = manifest_records(output, shards)
    ok_count = {name: 0 for name in inputs}
    for shard, lines in records.items():
        for record in lines:
            given = record.get("input", "")
            check(given.startswith(input_prefix), f"shard {shard} records an input {given!r} not in the corpus")
            name = given[len(input_prefix):]
            check(name in ok_count, f"shard {shard} records {given!r}, which is not an input")
            index = inputs.index(name)
            check(index % shards == shard - 1, f"{name} (input {index + 1}) is in shard {shard}'s manifest")
            check(record.get("status") in ("ok", "skipped"), f"{name}: {record.get('status')}: {record.get('error')}")
            if record["status"] == "ok":
                ok_count[name] += 1
    twice = [name for name, count in ok_count.items() if count > 1]
    never = [name for name, count in ok_count.items() if count == 0]
    check(not twice, f"converted more than once: {twice}")
    check(not never, f"never recorded ok: {never}")
    return records


def snapshot(output, names):
    """inode and modification time of each output present: a reconversion (temp file + rename) changes both."""
    stats = {}
    for name in names:
        path = output / name
        if path.exists():
            info = path.stat()
            stats[name] = (info.st_ino, info.st_mtime_ns)
    return stats


def ok_inputs(path, input_prefix):
    if not path.exists():
        return []
    names = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue   # a line being written
        if record.get("status") == "ok":
            names.append(record["input"][len(input_prefix):])
    return names


def check_resumed(before, after_records, output, done_before, shard, inputs, shards, input_prefix):
    """After a cancel or kill and a rerun: what was done was skipped and left as it was, the rest converted."""
    stats = snapshot(output, done_before)
    changed = [name for name in done_before if stats.get(name) != before.get(name)]
    check(not changed, f"outputs done before the interruption were written again: {changed}")
    history = {}
    for record in after_records[shard]:
        history.setdefault(record["input"][len(input_prefix):], []).append(record["status"])
    for name in inputs[shard - 1::shards]:
        expected = ["ok", "skipped"] if name in done_before else ["ok"]
        check(history.get(name) == expected,
              f"{name}: {'done' if name in done_before else 'not done'} before the interruption, then {history.get(name)}")


# --- the scenarios -----------------------------------------------------------------------------------

class Slurm:
    def __init__(self, daemons, root, koe_bin):
        self.daemons = daemons
        self.root = root
        self.environment = dict(daemons.environment, PATH=f"{koe_bin}:{os.environ['PATH']}")

    def submit(self, script_path):
        out = run(["sbatch", "--parsable", script_path], cwd=script_path.parent, env=self.environment)
        return out.strip().split(";")[0]

    def queued(self, job):
        out = run(["squeue", "-h", "-j", job, "-o", "%i %T"], env=self.environment)
        return [line.split() for line in out.splitlines() if line.strip()]

    def wait(self, job):
        deadline = time.monotonic() + WAIT_SECONDS
        while self.queued(job):
            self.daemons.check_alive()
            check(time.monotonic() < deadline, f"job array {job} still queued after {WAIT_SECONDS} s")
            time.sleep(0.2)

    def task_states(self, job):
        """task id -> (state, exit code) from `scontrol show job`, which keeps finished jobs for 5 minutes."""
        out = run(["scontrol", "-o", "show", "job", job], env=self.environment)
        states = {}
        for line in out.splitlines():
            fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
            states[int(fields["ArrayTaskId"])] = (fields["JobState"], fields["ExitCode"])
        return states


def scenario_slurm(slurm, corpus, inputs):
    folder = slurm.root / "slurm-run"
    folder.mkdir()
    script = folder / "koe-array.sh"
    script.write_text(slurm_script(corpus, folder / "augmented"))
    job = slurm.submit(script)
    slurm.wait(job)
    states = slurm.task_states(job)
    check(sorted(states) == list(range(1, ARRAY_SIZE + 1)), f"array {job} ran tasks {sorted(states)}")
    bad = {task: state for task, state in states.items() if state != ("COMPLETED", "0:0")}
    check(not bad, f"array {job} tasks not completed with exit 0: {bad} (logs: {folder}/slurm-*.out)")
    records = check_outputs(corpus, inputs, folder / "augmented", ARRAY_SIZE, str(corpus) + "/")
    lines = sum(len(r) for r in records.values())
    check(lines == len(inputs), f"{lines} manifest lines for {len(inputs)} inputs")
    return f"{ARRAY_SIZE} tasks COMPLETED 0:0, {len(inputs)} outputs complete, {lines} manifest lines, each input ok once"


def scenario_slurm_cancel(slurm, corpus, inputs):
    folder = slurm.root / "slurm-cancel"
    folder.mkdir()
    output = folder / "augmented"
    script = folder / "koe-array.sh"
    script.write_text(slurm_script(corpus, output))
    prefix = str(corpus) + "/"
    victim = 2
    manifest = output / f"koe-manifest.shard-{victim}-of-{ARRAY_SIZE}.jsonl"
    shard_size = len(inputs[victim - 1::ARRAY_SIZE])

    job = slurm.submit(script)
    deadline = time.monotonic() + WAIT_SECONDS
    while not ok_inputs(manifest, prefix):
        check(time.monotonic() < deadline, f"task {victim} converted nothing in {WAIT_SECONDS} s")
        slurm.daemons.check_alive()
        time.sleep(POLL_SECONDS)
    run(["scancel", f"{job}_{victim}"], env=slurm.environment)
    slurm.wait(job)
    states = slurm.task_states(job)
    check(states.get(victim, ("?",))[0] == "CANCELLED", f"task {victim} ended {states.get(victim)}, not CANCELLED")
    others = {task: state for task, state in states.items() if task != victim and state != ("COMPLETED", "0:0")}
    check(not others, f"the other tasks did not complete: {others}")
    done = ok_inputs(manifest, prefix)
    check(0 < len(done) < shard_size, f"task {victim} had {len(done)} of {shard_size} inputs done when cancelled: not midway")
    all_done = [name for shard in range(1, ARRAY_SIZE + 1)
                for name in ok_inputs(output / f"koe-manifest.shard-{shard}-of-{ARRAY_SIZE}.jsonl", prefix)]
    before = snapshot(output, all_done)

    job2 = slurm.submit(script)
    slurm.wait(job2)
    states = slurm.task_states(job2)
    bad = {task: state for task, state in states.items() if state != ("COMPLETED", "0:0")}
    check(sorted(states) == list(range(1, ARRAY_SIZE + 1)) and not bad, f"resubmitted array {job2}: {states}")
    records = check_outputs(corpus, inputs, output, ARRAY_SIZE, prefix)
    check_resumed(before, records, output, done, victim, inputs, ARRAY_SIZE, prefix)
    changed = [name for name in all_done if snapshot(output, [name]).get(name) != before[name]]
    check(not changed, f"outputs of the finished tasks were written again: {changed}")
    return (f"task {victim} cancelled with {len(done)} of {shard_size} inputs done; after resubmitting, "
            f"{len(all_done)} outputs done before are skipped and untouched, the other {len(inputs) - len(all_done)} "
            f"converted, each input ok once")


def descendants(root_pid):
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            children.setdefault(parent_of(int(entry.name)), []).append(int(entry.name))
    found, stack = [], [root_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def parent_of(pid):
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def command_line(pid):
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def scenario_parallel(root, corpus, inputs, koe_bin, kill):
    folder = root / ("parallel-kill" if kill else "parallel-run")
    folder.mkdir()
    shutil.copytree(corpus, folder / "corpus")
    line = parallel_line()
    environment = dict(os.environ, PATH=f"{koe_bin}:{os.environ['PATH']}", HOME=str(folder))
    output = folder / "out"
    prefix = "corpus/"
    if not kill:
        result = subprocess.run(["bash", "-c", line], cwd=folder, env=environment, capture_output=True, text=True,
                                timeout=WAIT_SECONDS)
        check(result.returncode == 0, f"`{line}` exited {result.returncode}: {result.stderr.strip()[-200:]}")
        records = check_outputs(folder / "corpus", inputs, output, PARALLEL_SHARDS, prefix)
        lines = sum(len(r) for r in records.values())
        check(lines == len(inputs), f"{lines} manifest lines for {len(inputs)} inputs")
        return f"{PARALLEL_SHARDS} shards, {len(inputs)} outputs complete, {lines} manifest lines, each input ok once"

    victim = 2
    manifest = output / f"koe-manifest.shard-{victim}-of-{PARALLEL_SHARDS}.jsonl"
    shard_size = len(inputs[victim - 1::PARALLEL_SHARDS])
    first = subprocess.Popen(["bash", "-c", line], cwd=folder, env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while not ok_inputs(manifest, prefix):
            check(first.poll() is None, f"parallel ended before shard {victim} converted anything")
            check(time.monotonic() < deadline, f"shard {victim} converted nothing in {WAIT_SECONDS} s")
            time.sleep(POLL_SECONDS)
        shard_argument = f"{victim}/{PARALLEL_SHARDS}".encode()
        def is_koe_batch(pid):
            argv = command_line(pid)
            return bool(argv) and Path(argv[0].decode()).name == "koe" and b"batch" in argv and shard_argument in argv
        # The batch itself, not its workers (koe processes too, its children).
        batch = [pid for pid in descendants(first.pid) if is_koe_batch(pid) and not is_koe_batch(parent_of(pid))]
        check(len(batch) == 1, f"found {len(batch)} koe batch processes for shard {victim}")
        for pid in [batch[0]] + descendants(batch[0]):   # the batch and its workers, as scancel would
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        text, _ = first.communicate(timeout=WAIT_SECONDS)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    check(first.returncode == 1, f"parallel should report one failed job after the kill, exited {first.returncode}")
    done = ok_inputs(manifest, prefix)
    check(0 < len(done) < shard_size, f"shard {victim} had {len(done)} of {shard_size} inputs done when killed: not midway")
    all_done = [name for shard in range(1, PARALLEL_SHARDS + 1)
                for name in ok_inputs(output / f"koe-manifest.shard-{shard}-of-{PARALLEL_SHARDS}.jsonl", prefix)]
    before = snapshot(output, all_done)

    again = subprocess.run(["bash", "-c", line], cwd=folder, env=environment, capture_output=True, text=True,
                           timeout=WAIT_SECONDS)
    check(again.returncode == 0, f"rerun of `{line}` exited {again.returncode}: {again.stderr.strip()[-200:]}")
    records = check_outputs(folder / "corpus", inputs, output, PARALLEL_SHARDS, prefix)
    check_resumed(before, records, output, done, victim, inputs, PARALLEL_SHARDS, prefix)
    changed = [name for name in all_done if snapshot(output, [name]).get(name) != before[name]]
    check(not changed, f"outputs done before the kill were written again: {changed}")
    return (f"shard {victim} killed with {len(done)} of {shard_size} inputs done; the rerun skipped the "
            f"{len(all_done)} done before (untouched) and converted the other {len(inputs) - len(all_done)}, each input ok once")


# --- main --------------------------------------------------------------------------------------------

def main():
    arguments = option_parser(__doc__).parse_args()
    koe = arguments.koe.resolve()
    os.environ["PATH"] += ":/usr/sbin:/sbin"   # slurmctld, slurmd and munged live there
    if os.geteuid() != 0:
        print("cluster: cannot run: needs root (slurmd starts each job as its user; this config runs all as root)")
        print("cluster: 0 passed, 1 failed")
        return 1
    missing = missing_tools(("munged", "munge", "slurmctld", "slurmd", "sbatch", "parallel", "espeak-ng", "sox"))
    missing += [] if koe.is_file() else [str(koe)]
    if missing:
        return cannot_run("cluster", missing, "make test-cluster")

    # A short path: munged's socket path must fit in a sockaddr_un.
    suite = Suite("cluster", arguments.keep, 14, dir="/tmp")
    root = suite.root
    root.chmod(0o755)
    koe_bin = root / "bin"
    koe_bin.mkdir()
    (koe_bin / "koe").symlink_to(koe)
    daemons = Daemons(root)
    with suite.running(daemons.down):
        corpus = root / "corpus"
        inputs = make_corpus(corpus)
        seconds = sum(soundfile.info(str(corpus / name)).duration for name in inputs)
        print(f"cluster: corpus of {len(inputs)} files, {seconds:.0f} s of speech, in {root}", flush=True)
        try:
            daemons.up()
        except Failure as failure:
            suite.report("slurm-daemons", False, str(failure))
        else:
            print(f"cluster: munged, slurmctld, slurmd up (PIDs {daemons.pids}) in "
                  f"{time.monotonic() - suite.started:.1f} s", flush=True)
            slurm = Slurm(daemons, root, koe_bin)
            suite.attempt("slurm", lambda: scenario_slurm(slurm, corpus, inputs))
            suite.attempt("slurm-cancel", lambda: scenario_slurm_cancel(slurm, corpus, inputs))
        for name, kill in (("parallel", False), ("parallel-kill", True)):
            suite.attempt(name, lambda: scenario_parallel(root, corpus, inputs, koe_bin, kill))

    return suite.finish(f"logs in {root}/log")


if __name__ == "__main__":
    sys.exit(main())
