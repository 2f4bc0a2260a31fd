#!/usr/bin/env python3
"""scripts/tokenize.py: documents in, ids with an EOS after each out, u16 or u32 by vocabulary.

Usage: tokenize_test.py SOURCE_DIR. The tokenizers are built here with the `tokenizers` library
(nothing is downloaded); exit 77 (skipped) when this Python has no `tokenizers`.
"""
import array
import json
import os
import subprocess
import sys
import tempfile

try:
    from tokenizers import Tokenizer, models, pre_tokenizers
except ImportError:
    print("tokenizers is not installed: skipped")
    sys.exit(77)

src = sys.argv[1]
script = os.path.join(src, "scripts", "tokenize.py")
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failed += not ok


def word_tokenizer(path, words):
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(path)


def run(*args, env=None):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env)


def ids_of(path, code):
    a = array.array(code)
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return list(a)


with tempfile.TemporaryDirectory() as tmp:
    small = os.path.join(tmp, "small.json")
    word_tokenizer(small, ["[UNK]", "</s>", "hello", "world", "foo"])
    jsonl = os.path.join(tmp, "a.jsonl")
    with open(jsonl, "w") as f:
        f.write(json.dumps({"text": "hello world", "id": 1}) + "\n\n" + json.dumps({"text": "foo"}) + "\n")
    txt = os.path.join(tmp, "b.txt")
    with open(txt, "w") as f:
        f.write("world hello\n")

    r = run("--tokenizer", small, "--eos-token", "</s>", "--out", os.path.join(tmp, "out"), jsonl, txt)
    out = os.path.join(tmp, "out.u16.bin")
    check("small vocabulary writes u16", r.returncode == 0 and os.path.exists(out), r.stderr)
    if os.path.exists(out):
        got = ids_of(out, "H")
        check("documents in order, each followed by the EOS", got == [2, 3, 1, 4, 1, 3, 2, 1], str(got))
    check("prints the --eos-id to pass", "--eos-id 1" in r.stdout and "8 tokens" in r.stdout, r.stdout)

    r = run("--tokenizer", small, "--eos-id", "1", "--line-docs", "--out", os.path.join(tmp, "lines.u16.bin"), txt)
    check("--line-docs and an explicit .u16.bin name", r.returncode == 0 and ids_of(os.path.join(tmp, "lines.u16.bin"), "H") == [3, 2, 1], r.stderr)

    big = os.path.join(tmp, "big.json")
    word_tokenizer(big, ["[UNK]", "</s>"] + [f"w{i}" for i in range(70000)])
    with open(txt, "w") as f:
        f.write("w69999 w0\n")
    r = run("--tokenizer", big, "--eos-token", "</s>", "--out", os.path.join(tmp, "big"), txt)
    big_out = os.path.join(tmp, "big.u32.bin")
    check("a vocabulary over 65536 writes u32", r.returncode == 0 and os.path.exists(big_out), r.stderr)
    if os.path.exists(big_out):
        check("u32 ids", ids_of(big_out, "I") == [70001, 2, 1], str(ids_of(big_out, "I")))
    r = run("--tokenizer", big, "--eos-token", "</s>", "--out", os.path.join(tmp, "x.u16.bin"), txt)
    check("a u16 name for a big vocabulary is refused", r.returncode != 0 and "more than uint16 holds" in r.stderr, r.stderr)

    with open(jsonl, "w") as f:
        f.write(json.dumps({"body": "hello"}) + "\n")
    r = run("--tokenizer", small, "--eos-token", "</s>", "--out", os.path.join(tmp, "bad"), jsonl)
    check("a record without the text field names the line and key",
          r.returncode != 0 and 'a.jsonl:1: key "text": missing' in r.stderr, r.stderr)
    r = run("--tokenizer", small, "--eos-token", "<eos>", "--out", os.path.join(tmp, "bad"), txt)
    check("an unknown EOS token is refused", r.returncode != 0 and '"<eos>" is not a token' in r.stderr, r.stderr)

    # Without `tokenizers`: a module of that name that fails to import stands in for its absence.
    fake = os.path.join(tmp, "fake")
    os.makedirs(fake)
    with open(os.path.join(fake, "tokenizers.py"), "w") as f:
        f.write("raise ImportError('No module named tokenizers')\n")
    r = run("--tokenizer", small, "--eos-id", "1", "--out", os.path.join(tmp, "none"), txt,
            env=dict(os.environ, PYTHONPATH=fake))
    check("without tokenizers: one clear line", r.returncode != 0 and "needs the Python package `tokenizers`" in r.stderr
          and r.stderr.count("\n") == 1, r.stderr)

sys.exit(1 if failed else 0)
