#!/usr/bin/env python3
"""scripts/tokenize.py: documents in, ids with an EOS after each out, u16 or u32 by vocabulary.

Usage: tokenize_test.py SOURCE_DIR. The tokenizers are built here with the `tokenizers` library
(nothing is downloaded); exit 77 (skipped) when this Python has no `tokenizers`. The Parquet checks
are skipped, with a line saying so, when it has no `pyarrow`. About 60 runs of the script, each a
Python start-up: some 15 s on 2 cores, four at a time where they are independent.
Checks: each input format (JSON Lines, .json as JSON Lines / array / {"data": [...]}, text,
gzip, Parquet), the EOS from a model folder, output safety (an input is never written, a failure
or an interruption leaves no partial file and an existing output as it was), and a table of bad
inputs, each one line on stderr and exit 2.
"""
import array
import concurrent.futures
import gzip
import json
import os
import signal
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
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail), flush=True)
    failed += not ok


def word_tokenizer(path, words):
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(path)


def run(*args, env=None):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env)


def run_all(arg_lists):
    """run() of each, several at a time (most of each run is Python starting): results in order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda args: run(*args), arg_lists))


def ids_of(path, code):
    a = array.array(code)
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return list(a)


def write(path, text, opener=open):
    with opener(path, "wt") as f:
        f.write(text)
    return path


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def jsonl(*records):
    return "".join(json.dumps(r) + "\n" for r in records)


def leftovers(folder):
    """Temporary files tokenize.py left in folder."""
    return [n for n in os.listdir(folder) if ".tmp-" in n]


def one_line_exit_2(r):
    return r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


with tempfile.TemporaryDirectory() as tmp:
    def at(name):
        return os.path.join(tmp, name)

    small = at("small.json")
    word_tokenizer(small, ["[UNK]", "</s>", "hello", "world", "foo"])
    eos = ["--tokenizer", small, "--eos-token", "</s>"]
    a_jsonl = write(at("a.jsonl"), json.dumps({"text": "hello world", "id": 1}) + "\n\n" + json.dumps({"text": "foo"}) + "\n")
    txt = write(at("b.txt"), "world hello\n")

    # --- Formats ---------------------------------------------------------------------------------
    r = run(*eos, "--out", at("out"), a_jsonl, txt)
    out = at("out.u16.bin")
    check("small vocabulary writes u16", r.returncode == 0 and os.path.exists(out), r.stderr)
    if os.path.exists(out):
        got = ids_of(out, "H")
        check("documents in order, each followed by the EOS", got == [2, 3, 1, 4, 1, 3, 2, 1], str(got))
    check("the final line: path, tokens, documents, vocabulary, the --eos-id to pass",
          r.stdout.splitlines()[-1:] == [f"{out}: 8 tokens, 3 documents, vocabulary 5; train with --data {out} --eos-id 1"],
          r.stdout)

    r = run("--tokenizer", small, "--eos-id", "1", "--line-docs", "--out", at("lines.u16.bin"), txt)
    check("--line-docs and an explicit .u16.bin name", r.returncode == 0 and ids_of(at("lines.u16.bin"), "H") == [3, 2, 1], r.stderr)

    # What Hugging Face datasets' to_json writes is JSON Lines in a .json file.
    three = [{"text": "hello"}, {"text": "world foo"}, {"text": "foo hello"}]
    want3 = [2, 1, 3, 4, 1, 4, 2, 1]
    cases = [
        ("a .json holding JSON Lines: three documents, three EOS", "lines.json", jsonl(*three), open),
        ("a .json holding a JSON array of objects", "array.json", json.dumps(three, indent=2), open),
        ("a .json holding a JSON array of strings", "strings.json", json.dumps([d["text"] for d in three]), open),
        ('a .json holding {"data": [...]}', "data.json", json.dumps({"version": 1, "data": three}), open),
        ("JSON Lines of strings", "strings.jsonl", jsonl(*[d["text"] for d in three]), open),
        ("a gzip-compressed .jsonl.gz", "gz.jsonl.gz", jsonl(*three), gzip.open),
        ("a gzip-compressed .json.gz (JSON Lines)", "gz.json.gz", jsonl(*three), gzip.open),
        ("a JSON Lines file with a byte order mark and CRLF", "bom.jsonl", "\ufeff" + jsonl(*three).replace("\n", "\r\n"), open),
    ]
    results = run_all([[*eos, "--out", at(f"three{i}"), write(at(file), text, opener)]
                       for i, (_, file, text, opener) in enumerate(cases)])
    for i, ((name, *_), r) in enumerate(zip(cases, results)):
        got = ids_of(at(f"three{i}.u16.bin"), "H") if r.returncode == 0 else r.stderr
        check(name, got == want3 and "3 documents" in r.stdout, str(got))

    with_empty = write(at("empty.jsonl"), jsonl({"text": "hello"}, {"text": ""}, {"text": "foo"}))
    r = run(*eos, "--out", at("empty"), with_empty)
    check("an empty document is skipped and counted", r.returncode == 0 and ids_of(at("empty.u16.bin"), "H") == [2, 1, 4, 1]
          and "2 documents (1 empty skipped)" in r.stdout, r.stdout + r.stderr)
    write(at("other.jsonl"), jsonl({"body": "hello"}, {"body": "foo"}))
    r = run(*eos, "--text-field", "body", "--out", at("other"), at("other.jsonl"))
    check("--text-field", r.returncode == 0 and ids_of(at("other.u16.bin"), "H") == [2, 1, 4, 1], r.stderr)
    write(at("json.txt"), jsonl(*three))
    r = run(*eos, "--format", "jsonl", "--out", at("forced"), at("json.txt"))
    check("--format jsonl reads a .txt as JSON Lines", r.returncode == 0 and ids_of(at("forced.u16.bin"), "H") == want3, r.stderr)

    # Parquet, in row batches of the --text-field column.
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        pyarrow = None
        print("note: pyarrow is not importable here: the Parquet checks are skipped")
    if pyarrow:
        table = pyarrow.table({"id": [1, 2, 3], "text": [d["text"] for d in three]})
        pyarrow.parquet.write_table(table, at("three.parquet"), row_group_size=2)
        r = run(*eos, "--out", at("pq"), at("three.parquet"))
        check("a Parquet file: its text column, three EOS", r.returncode == 0 and ids_of(at("pq.u16.bin"), "H") == want3,
              r.stdout + r.stderr)
        pyarrow.parquet.write_table(pyarrow.table({"text": ["hello", None]}), at("null.parquet"))
        r = run(*eos, "--out", at("pq"), at("null.parquet"))
        check("a Parquet null: one line naming the row", one_line_exit_2(r)
              and r.stderr.startswith(f'{at("null.parquet")}: row [1]: column "text": value null'), r.stderr)
        r = run(*eos, "--text-field", "id", "--out", at("pq"), at("three.parquet"))
        check("a Parquet column that is not text: one line", one_line_exit_2(r) and 'column "id": type int64 is not a string' in r.stderr, r.stderr)

    # Without pyarrow: a module of that name that fails to import stands in for its absence.
    no_arrow = at("no_arrow")
    os.makedirs(no_arrow)
    write(os.path.join(no_arrow, "pyarrow.py"), "raise ImportError('No module named pyarrow')\n")
    write(at("fake.parquet"), "not parquet")
    r = run(*eos, "--out", at("pq"), at("fake.parquet"), env=dict(os.environ, PYTHONPATH=no_arrow))
    check("Parquet without pyarrow: one line, exit 2", one_line_exit_2(r) and "pip install pyarrow" in r.stderr, r.stderr)

    # --- The big vocabulary ----------------------------------------------------------------------
    big = at("big.json")
    word_tokenizer(big, ["[UNK]", "</s>"] + [f"w{i}" for i in range(70000)])
    write(txt, "w69999 w0\n")
    r = run("--tokenizer", big, "--eos-token", "</s>", "--out", at("big"), txt)
    big_out = at("big.u32.bin")
    check("a vocabulary over 65536 writes u32", r.returncode == 0 and os.path.exists(big_out), r.stderr)
    if os.path.exists(big_out):
        check("u32 ids", ids_of(big_out, "I") == [70001, 2, 1], str(ids_of(big_out, "I")))
    r = run("--tokenizer", big, "--eos-token", "</s>", "--out", at("x.u16.bin"), txt)
    check("a u16 name for a big vocabulary is refused", one_line_exit_2(r) and "more than uint16 holds" in r.stderr, r.stderr)

    # --- A model folder as --tokenizer: its EOS without --eos flags ------------------------------
    model = at("model")
    os.makedirs(model)
    word_tokenizer(os.path.join(model, "tokenizer.json"), ["[UNK]", "<|end|>", "hello", "world", "foo", "</s>"])
    write(os.path.join(model, "tokenizer_config.json"), json.dumps({"eos_token": {"content": "<|end|>", "special": True}}))
    write(os.path.join(model, "config.json"), json.dumps({"eos_token_id": [5, 1]}))
    lines_json = at("lines.json")
    r = run("--tokenizer", model, "--out", at("m"), lines_json)
    check("a model folder: tokenizer_config.json's eos_token, no --eos flag", r.returncode == 0
          and ids_of(at("m.u16.bin"), "H") == want3 and "--eos-id 1" in r.stdout and '"eos_token" "<|end|>"' in r.stderr,
          r.stdout + r.stderr)
    r = run("--tokenizer", model, "--eos-token", "</s>", "--out", at("m"), lines_json)
    check("--eos-token overrides the folder's", r.returncode == 0 and ids_of(at("m.u16.bin"), "H")[:2] == [2, 5], r.stderr)
    os.remove(os.path.join(model, "tokenizer_config.json"))
    r = run("--tokenizer", model, "--out", at("m"), lines_json)
    check("a model folder: config.json's eos_token_id, the first of a list, said so", r.returncode == 0
          and "--eos-id 5" in r.stdout and "the first of [5, 1]" in r.stderr and ids_of(at("m.u16.bin"), "H")[:2] == [2, 5],
          r.stdout + r.stderr)
    write(os.path.join(model, "config.json"), json.dumps({"eos_token_id": 1}))
    r = run("--tokenizer", model, "--out", at("m"), lines_json)
    check("a model folder: config.json's eos_token_id as an integer", r.returncode == 0 and "--eos-id 1" in r.stdout, r.stderr)
    os.remove(os.path.join(model, "config.json"))
    r = run("--tokenizer", model, "--out", at("m"), lines_json)
    check("a model folder without an EOS: one line", one_line_exit_2(r) and "no EOS in tokenizer_config.json" in r.stderr, r.stderr)

    # --- Output safety ---------------------------------------------------------------------------
    victim = write(at("victim.u16.bin"), "hello world\n")
    before = read_bytes(victim)
    r = run(*eos, "--format", "text", "--out", victim, victim)
    check("--out that is the input: refused, the input unchanged", one_line_exit_2(r) and "is the input" in r.stderr
          and read_bytes(victim) == before, r.stderr)
    os.symlink(txt, at("link.u16.bin"))
    before = read_bytes(txt)
    r = run(*eos, "--out", at("link.u16.bin"), txt)
    check("--out that is a link to the input: refused, the input unchanged", one_line_exit_2(r) and read_bytes(txt) == before, r.stderr)
    os.link(txt, at("hard.u16.bin"))
    r = run(*eos, "--out", at("hard.u16.bin"), txt)
    check("--out that is a hard link to the input: refused, the input unchanged", one_line_exit_2(r) and read_bytes(txt) == before, r.stderr)
    r = run("--tokenizer", model, "--eos-id", "1", "--out", os.path.join(model, "corpus"), txt)
    check("--out inside the --tokenizer folder: refused", one_line_exit_2(r) and "lies inside the input folder" in r.stderr
          and not os.path.exists(os.path.join(model, "corpus.u16.bin")), r.stderr)
    tok_named = write(at("tok.u16.bin"), read_bytes(small).decode())
    before = read_bytes(tok_named)
    r = run("--tokenizer", tok_named, "--eos-id", "1", "--out", tok_named, txt)
    check("--out that is the --tokenizer file: refused, the file unchanged", one_line_exit_2(r) and "is the input" in r.stderr
          and read_bytes(tok_named) == before, r.stderr)

    # A bad record on line 3 of the second file, after a first file big enough to be written in part.
    valid = write(at("valid.jsonl"), jsonl(*([{"text": "hello world"}] * 3000)))
    bad = write(at("bad.jsonl"), jsonl({"text": "foo"}, {"text": "foo"}, {"body": "foo"}))
    existing = write(at("kept.u16.bin"), "the previous output")
    r = run(*eos, "--out", existing, valid, bad)
    check("a bad record midway: one line naming file:line and key", one_line_exit_2(r)
          and r.stderr.startswith(f'{bad}:3: key "text": missing (found keys: "body"'), r.stderr)
    check("a bad record midway: the existing output untouched, no partial file",
          read_bytes(existing) == b"the previous output" and not leftovers(tmp), str(leftovers(tmp)))
    r = run(*eos, "--out", at("fresh"), valid, bad)
    check("a bad record midway: no output at all when there was none",
          not os.path.exists(at("fresh.u16.bin")) and not leftovers(tmp), str(os.listdir(tmp)))

    # Interrupted while reading its second input (a pipe the test holds open): nothing left behind.
    fifo = at("pipe.jsonl")
    os.mkfifo(fifo)
    for signum, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        p = subprocess.Popen([sys.executable, script, *eos, "--out", existing, valid, fifo],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not ignored as in `cmd &`
        with open(fifo, "w") as w:  # returns once the script has opened the pipe: past the first input
            w.write(jsonl({"text": "foo"}))
            w.flush()
            p.send_signal(signum)
        # The pipe is closed before waiting: CPython runs a signal's handler between bytecodes, so a
        # signal that lands just before the script blocks in read() does not interrupt that read,
        # and the run waited for data that never came (once, 60 s). EOF wakes it; the handler then
        # runs before the script goes on.
        _, err = p.communicate(timeout=60)
        check(f"{signal.Signals(signum).name}: exit {code}, one line, the existing output untouched, no partial file",
              p.returncode == code and err.count("\n") == 1 and "Traceback" not in err
              and read_bytes(existing) == b"the previous output" and not leftovers(tmp),
              f"{p.returncode} {err!r} {leftovers(tmp)}")

    # --- Bad inputs: one line on stderr, exit 2 --------------------------------------------------
    write(at("missing.jsonl"), json.dumps({"body": "hello"}) + "\n")
    write(at("number.json"), jsonl({"text": "a"}, {"text": 3}))
    write(at("record.json"), json.dumps([{"text": "a"}, ["b"]]))
    write(at("broken.jsonl"), jsonl({"text": "a"}) + '{"text": "b"\n')
    write(at("broken.json"), '[{"text": "a"},\n {"text": "b"}\n')
    write(at("object.txt"), jsonl(*three))
    write(at("table.csv"), "text\nhello\n")
    with open(at("latin1.txt"), "wb") as f:
        f.write(b"hello \xe9\n")
    with open(at("cut.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(jsonl(*three).encode())[:20])
    E = ["--eos-id", "1"]  # the EOS flags of every case but one
    bad_cases = [
        ("a record without the text field names the line and key", [*E, at("missing.jsonl")],
         f'{at("missing.jsonl")}:1: key "text": missing (found keys: "body"; allowed: --text-field NAME)'),
        ("a text value that is not a string", [*E, at("number.json")],
         f'{at("number.json")}:2: key "text": value 3 (a number) is not a string (allowed: a JSON string)'),
        ("an array element that is no record", [*E, at("record.json")], f'{at("record.json")}: [1]: found ["b"] (an array)'),
        ("a JSON Lines line that is not JSON", [*E, at("broken.jsonl")], f'{at("broken.jsonl")}:2: column 13: not valid JSON'),
        ("a truncated JSON array", [*E, at("broken.json")], f'{at("broken.json")}: line 3 column 1: not valid JSON'),
        ("a text file that is JSON Lines", [*E, at("object.txt")], f'{at("object.txt")}:1: a JSON object in a text file'),
        ("a CSV file", [*E, at("table.csv")], f'{at("table.csv")}: CSV, not a corpus this script reads'),
        ("a token file as input", [*E, out], f"{out}: already token ids"),
        ("a file that is not UTF-8", [*E, at("latin1.txt")], f'{at("latin1.txt")}: byte 6 of the file is not valid UTF-8'),
        ("a truncated gzip file", [*E, at("cut.jsonl.gz")], f'{at("cut.jsonl.gz")}: cannot read'),
        ("a missing input", [*E, at("none.jsonl")], f'{at("none.jsonl")}: no such file'),
        ("a folder as input", [*E, model], f"{model}: a folder"),
        ("an unknown EOS token is refused", ["--eos-token", "<eos>", txt], f'--eos-token: value "<eos>" is not a token of {small}'),
        ("an --eos-id outside the vocabulary", ["--eos-id", "5", txt], f"--eos-id: value 5 is not an id of {small} (allowed: 0 to 4)"),
        ("a tokenizer.json without --eos flags", [txt], f"--tokenizer: {small} is a tokenizer.json file, which does not name"),
        ("an --out folder that does not exist", ["--eos-id", "1", "--out", at("no/such"), txt], f'--out: {at("no/such.u16.bin")}: the folder'),
        ("only empty documents", ["--eos-id", "1", write(at("blank.json"), '[""]')], f'{at("blank.json")}: no documents (1 empty'),
    ]
    results = run_all([["--tokenizer", small, *args] + ([] if "--out" in args else ["--out", at("badout")])
                       for _, args, _ in bad_cases])
    for (name, _, want), r in zip(bad_cases, results):
        check(name, one_line_exit_2(r) and r.stderr.startswith(want), f"exit {r.returncode}: {r.stderr!r}")
    check("no bad input wrote an output or a partial file", not os.path.exists(at("badout.u16.bin")) and not leftovers(tmp),
          str(leftovers(tmp)))
    r = run("--tokenizer", small, "--eos-id", "1", "--eos-token", "</s>", "--out", at("badout"), txt)
    check("argparse's own usage errors exit 2", r.returncode == 2 and "not allowed with argument" in r.stderr, r.stderr)

    # Without `tokenizers`: a module of that name that fails to import stands in for its absence.
    fake = at("fake")
    os.makedirs(fake)
    write(os.path.join(fake, "tokenizers.py"), "raise ImportError('No module named tokenizers')\n")
    r = run("--tokenizer", small, "--eos-id", "1", "--out", at("none"), txt, env=dict(os.environ, PYTHONPATH=fake))
    check("without tokenizers: one clear line", one_line_exit_2(r) and "needs the Python package `tokenizers`" in r.stderr, r.stderr)

sys.exit(1 if failed else 0)
