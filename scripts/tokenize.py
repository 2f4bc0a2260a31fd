#!/usr/bin/env python3
"""Turn a text or JSONL corpus into a token file for `spplan run --data` (engine/io/data.hpp).

    scripts/tokenize.py --tokenizer tokenizer.json --eos-token '</s>' --out corpus  a.jsonl b.txt ...

Each document is encoded with a Hugging Face tokenizer (the `tokenizers` package, a
tokenizer.json file: what a model folder on the Hub holds) and followed by the EOS id, so the
engine's --eos-id masks the labels that cross from one document into the next.
Documents: a *.jsonl / *.json-lines file gives one per line (the string in --text-field, "text" by
default); any other file is UTF-8 text, one document per file (--line-docs: one per non-empty line).
Output: OUT.u16.bin when every id fits 16 bits (vocabulary <= 65536), else OUT.u32.bin,
little-endian, the documents in the order given. An --out that already ends in .u16.bin or
.u32.bin is used as is (and must fit). Prints the path, the token count and the --eos-id to pass.
Nothing is downloaded: the tokenizer is a local file.
"""

import argparse
import array
import json
import sys

BATCH_DOCS = 1024  # documents encoded per encode_batch call: bounded memory for any corpus size


def documents(path, text_field, line_docs):
    """Yields (where, text) for each document of one input file."""
    jsonl = path.endswith(".jsonl") or path.endswith(".json-lines")
    with open(path, encoding="utf-8") as f:
        if not jsonl and not line_docs:
            yield path, f.read()
            return
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            if not jsonl:
                yield f"{path}:{number}", line.rstrip("\n")
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not a JSON object ({e.msg})")
            text = record.get(text_field) if isinstance(record, dict) else None
            if not isinstance(text, str):
                sys.exit(f'{path}:{number}: key "{text_field}": missing or not a string (allowed: --text-field NAME)')
            yield f"{path}:{number}", text


def output_path(out, vocab_size):
    width = "u16" if vocab_size <= 1 << 16 else "u32"
    for fixed in ("u16", "u32"):
        if out.endswith(f".{fixed}.bin"):
            if fixed == "u16" and width == "u32":
                sys.exit(f"--out: {out}: the vocabulary has {vocab_size} ids, more than uint16 holds (allowed: a .u32.bin name)")
            return out, fixed
    return f"{out}.{width}.bin", width


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", help="text or JSONL files, in order")
    p.add_argument("--tokenizer", required=True, help="a Hugging Face tokenizer.json file")
    p.add_argument("--out", required=True, help="output path, without or with .u16.bin / .u32.bin")
    eos = p.add_mutually_exclusive_group(required=True)
    eos.add_argument("--eos-token", help="the end-of-sequence token's text, e.g. '</s>' or '<|endoftext|>'")
    eos.add_argument("--eos-id", type=int, help="the end-of-sequence id")
    p.add_argument("--text-field", default="text", help='the JSONL key holding the text (default "text")')
    p.add_argument("--line-docs", action="store_true", help="text files: one document per non-empty line")
    args = p.parse_args()

    try:
        from tokenizers import Tokenizer
    except ImportError:
        sys.exit("scripts/tokenize.py: needs the Python package `tokenizers` (pip install tokenizers)")

    try:
        tok = Tokenizer.from_file(args.tokenizer)
    except Exception as e:  # tokenizers raises its own exception type for unreadable files
        sys.exit(f"--tokenizer: {args.tokenizer}: cannot load ({str(e).splitlines()[0]})")
    vocab_size = tok.get_vocab_size(with_added_tokens=True)
    if args.eos_token is not None:
        eos_id = tok.token_to_id(args.eos_token)
        if eos_id is None:
            sys.exit(f'--eos-token: value "{args.eos_token}" is not a token of {args.tokenizer}')
    else:
        eos_id = args.eos_id
        if not 0 <= eos_id < vocab_size:
            sys.exit(f"--eos-id: value {eos_id} is not below the vocabulary size {vocab_size}")
    path, width = output_path(args.out, vocab_size)

    total = 0
    with open(path, "wb") as out:
        def flush(batch):
            nonlocal total
            ids = array.array("H" if width == "u16" else "I")
            for enc in tok.encode_batch(batch, add_special_tokens=False):
                ids.extend(enc.ids)
                ids.append(eos_id)
            if sys.byteorder != "little":
                ids.byteswap()
            ids.tofile(out)
            total += len(ids)

        batch = []
        for name in args.inputs:
            try:
                for _, text in documents(name, args.text_field, args.line_docs):
                    batch.append(text)
                    if len(batch) == BATCH_DOCS:
                        flush(batch)
                        batch = []
            except OSError as e:
                sys.exit(f"{name}: cannot read ({e.strerror})")
            except UnicodeDecodeError as e:
                sys.exit(f"{name}: byte {e.start} is not valid UTF-8")
        if batch:
            flush(batch)
    print(f"{path}: {total} tokens, vocabulary {vocab_size}; train with --data {path} --eos-id {eos_id}")


if __name__ == "__main__":
    main()
