"""What scripts/gpu-table.py's tables share: one lease's files read (a bad one is BadInput, one
line), and a run priced by `spplan` under a trainer's record with the knobs it ran."""
import functools
import json
import os
import subprocess

GIB = 1024.0**3
# The knobs `spplan run` takes by default (engine/run/options.cpp), spelled for `spplan estimate`,
# which prices exactly the knobs it is given.
RUN_DEFAULTS = {"--sp": "1", "--zero": "0", "--offload-optimizer": "none", "--offload-params": "none", "--micro-batch": "1"}


class BadInput(Exception):
    pass


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput("%s: %s" % (path, e))


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    except (OSError, ValueError) as e:
        raise BadInput("%s: %s" % (path, e))
    return rows


def need(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise BadInput("%s: key '%s' missing" % (where, key))
    return obj[key]


def pct(predicted, measured):
    return 100.0 * (predicted - measured) / measured


def number(obj, key, where):
    v = need(obj, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise BadInput("%s: key '%s': value %r is not a number >= 0" % (where, key, v))
    return v


def outcome(r, where):
    """What one measured row came to: 'yes' (ran), 'out of memory', 'exit N' or 'failed' (an error
    without a launch's exit: trl_gpu.py's export failed, or its probe reported one)."""
    if r.get("oom"):
        return "out of memory"
    rc = r.get("exit") if "error" in r else need(r, "exit", where)
    if rc == 0 and "error" not in r:
        return "yes"
    return "exit %s" % rc if rc not in (None, 0) else "failed"


# Once per question: the slack table asks again for the estimates the runs table priced (its
# callers read the answer, never change it).
@functools.lru_cache(maxsize=None)
def planner(spplan, command, d, gpu, flags, trainer="engine"):
    """`spplan COMMAND --json` on one GPU with a run's flags (its model first: a preset, or a model
    file the lease kept beside its results) under `trainer`'s record, the knobs `spplan run`
    defaults to made explicit where the flags leave them out."""
    words = flags.split()
    model = os.path.join(d, os.path.basename(words[0])) if words[0].endswith(".toml") else words[0]
    args = [spplan, command, "--model", model, "--gpu", gpu, "--gpus", "1", "--trainer", trainer, "--json"] + words[1:]
    for k, v in RUN_DEFAULTS.items():
        if k not in words:
            args += [k, v]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise BadInput("spplan %s %s: exit %d: %s" % (command, flags, p.returncode, " ".join(p.stderr.strip().splitlines()[-1:])))
    return json.loads(p.stdout)


def estimate(spplan, d, gpu, flags, trainer="engine"):
    return planner(spplan, "estimate", d, gpu, flags, trainer)
