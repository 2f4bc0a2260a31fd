"""What the CPU launch tests share (tests/scripts/launch_test.py, tests/scripts/launch_trl_test.py):
starting a launcher in its own process group under a time limit, reading what its ranks recorded,
building DeepSpeed's CPU ops once, and a tiny model with a word-level tokenizer, made here so that
nothing is downloaded."""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time


class Checks:
    """Named checks, printed as they run ("ok   NAME", or "FAIL NAME: DETAIL") and counted."""

    def __init__(self):
        self.failed = 0

    def __call__(self, name, ok, detail=""):
        print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail), flush=True)
        self.failed += not ok
        return ok


def launch_env():
    """This process's environment without the caller's Accelerate or parallel settings (a run must
    get them from the export) or a launcher's rank, offline (nothing is downloaded)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARALLELISM_CONFIG_", "ACCELERATE_", "FSDP_"))}
    for key in ("LOCAL_RANK", "RANK", "WORLD_SIZE"):
        env.pop(key, None)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "WANDB_MODE": "disabled", "TOKENIZERS_PARALLELISM": "false"})
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, cwd, env, log, timeout_s):
    """Runs cmd in its own process group (a timeout ends every rank): (exit code, seconds)."""
    t0 = time.time()
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            rc = 124
    return rc, time.time() - t0


def trainer_flags(yaml_text):
    """The HF Trainer flags an accelerate export names in its comment, or None."""
    lines = yaml_text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if "HF Trainer script flags" in line and lines[i + 1].startswith("#"):
            return shlex.split(lines[i + 1].lstrip("#").strip())
    return None


def last_error(log):
    """The launch's last error line (the ranks' tracebacks end in it)."""
    try:
        lines = open(log, errors="replace").read().splitlines()
    except OSError:
        return ""
    errors = [l for l in lines if re.search(r"(Error|Exception|Timeout)\b.*:", l) and "ChildFailedError" not in l]
    return (errors[-1] if errors else "\n".join(lines[-3:]))[-400:]


def read_records(path):
    """The JSON lines the ranks appended, in rank order."""
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [json.loads(l) for l in f if l.strip()]
    return sorted(rows, key=lambda r: r.get("rank", -1))


def prebuild_ops(env):
    """DeepSpeed builds its CPU Adam and shared-memory ops on first use; every rank would wait for
    the build inside the launch's timeout. Built here once into env's TORCH_EXTENSIONS_DIR
    (minutes), then loaded in a second: (ok, last error line, seconds)."""
    code = ("from deepspeed.accelerator import get_accelerator as g\n"
            "for n in ('FusedAdamBuilder', 'ShareMemCommBuilder'):\n"
            "    b = g().create_op_builder(n)\n"
            "    b is not None and b.load()\n")
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1200)
        ok, detail = r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        ok, detail = False, "timed out after 1200 s"
    return ok, detail, time.time() - t0


def write_tiny_model(model_dir, config, vocab_size, model_type="llama"):
    """A model of `model_type` and `config` (transformers' key names) with random weights (seed 0)
    and a word-level tokenizer of vocab_size tokens ("w0", "w1", ... after <unk>, <pad>, <eos>) with
    a chat template: the words a data set may use."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast

    transformers.utils.logging.disable_progress_bar()
    specials = ["<unk>", "<pad>", "<eos>"]
    words = [f"w{i}" for i in range(vocab_size - len(specials))]
    tok = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(specials + words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")
    fast.chat_template = "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} <eos> {% endfor %}"
    fast.save_pretrained(model_dir)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **config)).save_pretrained(model_dir)
    return words
